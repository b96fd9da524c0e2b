// A consumer of a vendored segred: segment sums over sorted ids with an
// empty segment (exit 1 if wrong).
#include <segred/segred.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
    const std::vector<float> data = {1, 2, 3, 4, 5, 6, 7, 8};
    const std::vector<std::int32_t> ids = {0, 0, 2, 2, 2, 3, 3, 3};
    std::vector<float> sums(4);
    segred::segment_reduce(segred::host, segred::rows(data.data(), 8), segred::sorted_ids(ids.data(), 4),
                           segred::rows(sums.data(), 4), segred::sum{});
    if (sums != std::vector<float>{3, 0, 12, 21}) {
        std::printf("wrong sums: %g %g %g %g\n", sums[0], sums[1], sums[2], sums[3]);
        return 1;
    }
    std::printf("segred %s: sums 3 0 12 21\n", SEGRED_VERSION_STRING);
    return 0;
}
