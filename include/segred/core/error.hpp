// segred/core/error.hpp -- the exceptions segred throws.
#pragma once

#include <stdexcept>
#include <string>

namespace segred {

// Bad input: an out-of-range id, non-monotonic offsets, a shape mismatch...
// The message names the function, the argument, the first bad position and
// its value. When it is thrown nothing has been written.
class error : public std::runtime_error {
public:
    explicit error(const std::string& what) : std::runtime_error(what) {}
};

// A CUDA runtime call failed. code() is the cudaError_t value as an int, so
// this header needs no CUDA include; what() names the call and CUDA's text.
class cuda_error : public error {
public:
    cuda_error(const std::string& what, int code) : error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

} // namespace segred
