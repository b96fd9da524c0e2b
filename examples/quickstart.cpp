#include <segred/segred.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
    // Six rows and the group each belongs to, in any order.
    const std::vector<double> values = {10, 20, 30, 40, 50, 10};
    const std::vector<std::int64_t> ids = {0, 1, 0, 2, 1, 2};
    const auto v = segred::rows(values.data(), 6);
    const auto groups = segred::ids(ids.data(), 3);

    // Per-group maximum and the row holding it: MATLAB accumarray(ids, v, [], @max).
    std::vector<double> max(3);
    std::vector<std::int64_t> row(3);
    segred::accumarray(segred::host, v, groups, segred::rows(max.data(), 3), segred::max{},
                       segred::options{}.arg_out(row.data()));

    // Per-group mean; a group without rows would read NaN instead of 0.
    std::vector<double> mean(3);
    segred::accumarray(segred::host, v, groups, segred::rows(mean.data(), 3), segred::mean{},
                       segred::options{}.fill_nan());

    for (int g = 0; g < 3; ++g)
        std::printf("group %d: max %g at row %lld, mean %g\n", g, max[g], static_cast<long long>(row[g]), mean[g]);
    // group 0: max 30 at row 2, mean 20
    // group 1: max 50 at row 4, mean 35
    // group 2: max 40 at row 3, mean 25
}
