// One binary, two translation units that both include the umbrella header:
// this one compiled by the C++ compiler (host backend only), mixed_device.cu
// by nvcc (host backend plus the CUDA backend). Linking them together proves
// the header's inline functions and variables agree across both compilers.
#include <segred/segred.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

// Defined in mixed_device.cu.
bool mixed_device_tu_ok();

static bool host_tu_ok() {
    // Worked example: values [10,20,30,40,50,60], ids [0,1,0,2,1,2] -> sums [40,70,100].
    const std::vector<double> v = {10, 20, 30, 40, 50, 60};
    const std::vector<std::int64_t> id = {0, 1, 0, 2, 1, 2};
    std::vector<double> out(3);
    segred::accumarray(segred::host, segred::rows(v.data(), 6), segred::ids(id.data(), 3),
                       segred::rows(out.data(), 3), segred::sum{});
    return out == std::vector<double>{40, 70, 100};
}

int main() {
    const bool host = host_tu_ok();
    const bool device = mixed_device_tu_ok();
    if (!host || !device) {
        std::printf("FAIL: host TU %s, nvcc TU %s\n", host ? "ok" : "wrong", device ? "ok" : "wrong");
        return 1;
    }
    std::printf("OK\n");
    return 0;
}
