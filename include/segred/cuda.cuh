// segred/cuda.cuh -- the CUDA backend: segred::cuda::par and every algorithm
// on device pointers. Include it (or the umbrella <segred/segred.hpp>) from a
// translation unit compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)
#error "<segred/cuda.cuh> needs a CUDA compiler; plain C++ code includes <segred/segred.hpp> for the host backend"
#endif

#include "core/config.hpp"
#include "core/descriptors.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "core/reducers.hpp"
#include "core/views.hpp"

#include "bincount.hpp"
#include "gather.hpp"
#include "segment_reduce.hpp"
#include "segment_softmax.hpp"

#include "cuda/error.cuh"
#include "cuda/gather.cuh"
#include "cuda/gather_segment_reduce.cuh"
#include "cuda/policy.cuh"
#include "cuda/segment_map.cuh"
#include "cuda/segment_reduce.cuh"
#include "cuda/segment_softmax.cuh"
#include "cuda/temporary_pool.cuh"
