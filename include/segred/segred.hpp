// segred/segred.hpp -- the umbrella header.
//
// Host backend always; the CUDA backend too when compiled by nvcc. Plain
// g++ -std=c++17 compiles it with no CUDA on the include path.
#pragma once

#include "core/config.hpp"
#include "core/descriptors.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "core/policy.hpp"
#include "core/reducers.hpp"
#include "core/views.hpp"

#include "bincount.hpp"
#include "gather.hpp"
#include "segment_reduce.hpp"
#include "segment_softmax.hpp"

// Backward passes and the fused / soft ops built on the backend primitives
// (core/backend.hpp).
#include "bincount_backward.hpp"
#include "gather_segment_reduce.hpp"
#include "segment_reduce_backward.hpp"
#include "segment_softmax_backward.hpp"
#include "soft_histogram.hpp"

#include "host/gather.hpp"
#include "host/gather_segment_reduce.hpp"
#include "host/segment_map.hpp"
#include "host/segment_reduce.hpp"
#include "host/segment_softmax.hpp"

#if defined(__CUDACC__)
#include "cuda.cuh"
#endif
