// A consumer of segred: group means by unsorted ids (exit 1 if wrong).
#include <segred/segred.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
    const std::vector<double> values = {10, 20, 30, 40, 50, 60};
    const std::vector<std::int64_t> ids = {0, 1, 0, 2, 1, 2};
    std::vector<double> mean(3);
    segred::accumarray(segred::host, segred::rows(values.data(), 6), segred::ids(ids.data(), 3),
                       segred::rows(mean.data(), 3), segred::mean{});
    if (mean != std::vector<double>{20, 35, 50}) {
        std::printf("wrong means: %g %g %g\n", mean[0], mean[1], mean[2]);
        return 1;
    }
    std::printf("segred %s: means 20 35 50\n", SEGRED_VERSION_STRING);
    return 0;
}
