// segred/host/detail/line_streams.hpp -- many sequential output streams
// written a cache line at a time, past the cache.
//
// The partition pass of the partitioned scatter appends each row to one of
// dozens of streams. Written entry by entry, every stream keeps a line open
// in the cache, which is first read from memory (a write miss) and later
// evicted; with dozens of streams those lines no longer stay in L1 and the
// pass runs at half speed or less. Here each stream fills a 64-byte buffer
// that stays in L1, and a full line goes to memory with non-temporal stores:
// no read of the line, and the cache keeps the buffers. On the 2-core
// development VM a bare partition pass of 2^24 rows ran as fast this way as
// with plain stores at 32 streams, 1.5x faster at 64 and 2x at 128, and
// slower at 4 to 16 (where plain stores stay in L1); the partitioned
// scatter, 2^24 rows into 2^22 fp32 sums (32 partitions), ran 1.36x faster
// at 2 threads. So callers use it from `min_line_streams` on.
//
// Lines shared with a neighbour (the first and last of a stream's range,
// which another block or another stream may also write) are written with
// plain stores, entry by entry, so only whole lines of one's own range are
// streamed. Without SSE2 (non-x86 targets) `fits` is false and callers keep
// plain stores.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "sse_lanes.hpp"

namespace segred {
namespace host_detail {

constexpr std::int64_t min_line_streams = 32;

template <class E>
class line_streams {
    static constexpr std::size_t line_bytes = 64;
    static constexpr std::uint32_t per_line = static_cast<std::uint32_t>(line_bytes / sizeof(E));
    struct alignas(line_bytes) line {
        E e[line_bytes / sizeof(E)];
    };

  public:
    // Whether streams of E can be written this way: SSE2 here, and entries
    // that tile a line.
    static constexpr bool fits =
        SEGRED_HOST_SSE2 && line_bytes % sizeof(E) == 0 && std::is_trivially_copyable<E>::value;
    // And whether base puts entries on those tiles (any malloc does).
    static bool aligned(const E* base) {
        return fits && reinterpret_cast<std::uintptr_t>(base) % sizeof(E) == 0;
    }

    // Stream q appends at base + start[q], onwards.
    line_streams(E* base, const std::int64_t* start, std::int64_t streams)
        : buf_(static_cast<std::size_t>(streams)), cur_(static_cast<std::size_t>(streams)) {
        for (std::size_t q = 0; q < cur_.size(); ++q) {
            E* const p = base + start[q];
            const std::uint32_t in_line =
                static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) % line_bytes / sizeof(E));
            cur_[q] = cursor{p - in_line, in_line, in_line};
        }
    }

    void push(std::int64_t q, const E& e) {
        cursor& c = cur_[static_cast<std::size_t>(q)];
        line& b = buf_[static_cast<std::size_t>(q)];
        b.e[c.fill] = e;
        if (++c.fill == per_line) flush_line(c, b);
    }

    // Writes what each buffer still holds and orders the streamed lines
    // before anything this thread stores or signals afterwards.
    void finish() {
        for (std::size_t q = 0; q < cur_.size(); ++q)
            for (std::uint32_t j = cur_[q].first; j < cur_[q].fill; ++j) cur_[q].at[j] = buf_[q].e[j];
#if SEGRED_HOST_SSE2
        _mm_sfence();
#endif
    }

  private:
    struct cursor {
        E* at;               // the stream's current line
        std::uint32_t fill;  // entries of that line buffered so far, counted from its start
        std::uint32_t first; // the line's first entry that is the stream's own (0 past its first line)
    };

    static void flush_line(cursor& c, const line& b) {
        if (c.first == 0) {
#if SEGRED_HOST_SSE2
            const __m128i* src = reinterpret_cast<const __m128i*>(&b);
            __m128i* out = reinterpret_cast<__m128i*>(c.at);
            _mm_stream_si128(out, _mm_load_si128(src));
            _mm_stream_si128(out + 1, _mm_load_si128(src + 1));
            _mm_stream_si128(out + 2, _mm_load_si128(src + 2));
            _mm_stream_si128(out + 3, _mm_load_si128(src + 3));
#else
            std::memcpy(c.at, &b, line_bytes);
#endif
        } else {
            for (std::uint32_t j = c.first; j < per_line; ++j) c.at[j] = b.e[j];
            c.first = 0;
        }
        c.at += per_line;
        c.fill = 0;
    }

    std::vector<line> buf_;
    std::vector<cursor> cur_;
};

} // namespace host_detail
} // namespace segred
