// segred/host/kept_temporaries.hpp -- large host temporaries kept between
// calls, so that the next call of the same size reuses their pages.
//
// A temporary of many megabytes (the partitioned scatter's entries, states
// as large as the output) is fresh memory from the kernel on every call,
// and the kernel zeroes each page on its first touch: on the 2-core AMD
// EPYC development VM, 18% of a one-thread sum of 2^24 unsorted rows into
// 2^22 segments, 28% of an argmax into as many, went to that zeroing
// (clear_page_erms), on top of the page faults that 2 MiB pages already
// spare (big_buffer.hpp). Calls in a loop (a training step, a benchmark)
// ask for the same sizes each time, so segred keeps the blocks of its
// large temporaries, up to a limit, and hands them out again: as the CUDA
// backend's own pool keeps up to 256 MiB (cuda/temporary_pool.cuh).
//
// Only blocks of big_buffer_min_bytes and more are kept (smaller ones come
// from malloc, which keeps its own). A kept block is handed out for a
// request of at least half its size, so one large block is not spent on a
// small temporary while a later large one maps fresh memory. When a block
// comes back and the kept bytes would pass the limit, the blocks kept
// longest go back to the system first; a block larger than the limit is
// never kept. A kept block's contents are whatever its last user left:
// every temporary is written before it is read (make_zeroed_big_array
// zeroes its own).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace segred {

// What segred keeps of its large host temporaries unless the program says
// otherwise (set_host_temporary_keep_bytes).
inline constexpr std::size_t host_temporary_keep_bytes_default = std::size_t(256) << 20;

namespace host_detail {

class kept_blocks {
public:
    // A kept block of at least `bytes` and at most twice that (the smallest
    // such), with its size in `size`; nullptr when there is none.
    void* take(std::size_t bytes, std::size_t& size) {
        const std::lock_guard<std::mutex> lock(guard_);
        std::size_t best = blocks_.size();
        for (std::size_t i = 0; i < blocks_.size(); ++i) {
            const std::size_t b = blocks_[i].second;
            if (b >= bytes && b / 2 <= bytes && (best == blocks_.size() || b < blocks_[best].second)) best = i;
        }
        if (best == blocks_.size()) return nullptr;
        void* p = blocks_[best].first;
        size = blocks_[best].second;
        held_ -= size;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
        return p;
    }

    // Block p of `size` bytes (from malloc or posix_memalign) is done with:
    // kept, or freed when it cannot be.
    void give(void* p, std::size_t size) noexcept {
        const std::lock_guard<std::mutex> lock(guard_);
        if (size > limit_) {
            std::free(p);
            return;
        }
        free_oldest_until(limit_ - size);
        try {
            blocks_.emplace_back(p, size);
            held_ += size;
        } catch (...) {  // no room to note it: it goes back instead
            std::free(p);
        }
    }

    std::size_t set_limit(std::size_t bytes) {
        const std::lock_guard<std::mutex> lock(guard_);
        const std::size_t before = limit_;
        limit_ = bytes;
        free_oldest_until(bytes);
        return before;
    }

    std::size_t limit() {
        const std::lock_guard<std::mutex> lock(guard_);
        return limit_;
    }

    std::size_t held() {
        const std::lock_guard<std::mutex> lock(guard_);
        return held_;
    }

    std::size_t release() {
        const std::lock_guard<std::mutex> lock(guard_);
        const std::size_t freed = held_;
        free_oldest_until(0);
        return freed;
    }

private:
    // Frees the blocks kept longest until at most `bytes` are held.
    void free_oldest_until(std::size_t bytes) noexcept {
        std::size_t gone = 0;
        while (gone < blocks_.size() && held_ > bytes) {
            std::free(blocks_[gone].first);
            held_ -= blocks_[gone].second;
            ++gone;
        }
        blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(gone));
    }

    std::mutex guard_;
    std::vector<std::pair<void*, std::size_t>> blocks_;  // oldest first
    std::size_t held_ = 0;
    std::size_t limit_ = host_temporary_keep_bytes_default;
};

// The process's one keeper. Never destroyed: a call made while static
// objects are being destroyed at exit still finds it (its blocks stay
// reachable through it until the process ends).
inline kept_blocks& kept_temporaries() {
    static kept_blocks* const keeper = new kept_blocks;
    return *keeper;
}

} // namespace host_detail

// Sets how many bytes of large host temporaries segred keeps between calls
// (0 keeps none) and frees what is kept beyond it; returns the previous
// limit. Thread-safe.
inline std::size_t set_host_temporary_keep_bytes(std::size_t bytes) {
    return host_detail::kept_temporaries().set_limit(bytes);
}

// The limit set above (host_temporary_keep_bytes_default until set).
inline std::size_t host_temporary_keep_bytes() { return host_detail::kept_temporaries().limit(); }

// Bytes of host temporaries kept now, waiting for the next call.
inline std::size_t host_temporaries_kept_bytes() { return host_detail::kept_temporaries().held(); }

// Frees every kept host temporary (the limit stays); returns the bytes
// freed.
inline std::size_t release_host_temporaries() { return host_detail::kept_temporaries().release(); }

} // namespace segred
