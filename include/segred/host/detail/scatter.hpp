// segred/host/detail/scatter.hpp -- unsorted ids reduced by a direct scatter
// into per-segment states, without sorting the rows first.
//
// Three shapes, picked from n, M and the width (never the thread count), so
// every result bit is the same whatever the number of threads:
//
// - Few segments (blocks): rows are cut into fixed blocks, each several times
//   larger than M. A block folds its rows, in row order, into private states;
//   the blocks' states are then combined per segment in block order.
// - Many segments whose states fit in cache (owned ranges): each thread owns
//   a range of segment ids and scans every row, folding only the rows of its
//   own segments. Each segment then sees its rows in row order from one
//   initial state: the plain sequential result.
// - Many segments beyond that (partitioned): rows are first partitioned by id
//   range, stably, then each partition folds into a cache-sized slice of
//   states: again the sequential result. (Inputs whose ids mostly repeat
//   their predecessor take owned ranges instead, whatever the thread count;
//   one-column sums and means of them fold each run into four partials.)
//
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "parallel.hpp"
#include "prefetch.hpp"
#include "segment_loops.hpp"

namespace segred {
namespace host_detail {

// Rows per block of the block shape: enough rows per private state that
// initializing and combining the states stays a small part of the work.
// Up to 32 rows a state while that leaves at least 16 blocks, at least 8:
// each block initializes its states and the combine reads them back from
// memory, which at 8 rows a state took a sixth of a one-thread scatter of
// uniform ids into 16384 fp32 sums (2-core AMD EPYC VM: 2^24 rows 21.6 ms,
// a plain loop 17.7; 17.1 at 32 rows a state). Sixteen blocks still give
// that many threads a block each.
inline std::int64_t scatter_block_rows(std::int64_t n, std::int64_t M, std::int64_t width) {
    const std::int64_t rows = std::max<std::int64_t>(8 * M, std::min<std::int64_t>(32 * M, n / 16));
    return std::max<std::int64_t>((std::int64_t(1) << 16) / std::max<std::int64_t>(width, 1), rows);
}

// Below this many blocks the owned-range shape is used.
constexpr std::int64_t min_scatter_blocks = 4;

// Spare slots of an owner of the owned-range shape (a power of two, at
// most the 64 slots each owner's spare region has).
constexpr std::int64_t owned_spares = 8;

// Id k where it lies in [lo, lo + own), else `other`. One unsigned compare
// keeps k < lo, k >= lo + own and the skip mark (-1) out, and a mask, not
// `?:`, picks: GCC made the `?:` a branch, which two owners of the
// owned-range shape mispredict on every other row.
inline std::int64_t owned_or(std::int64_t k, std::int64_t lo, std::int64_t own, std::int64_t other) {
    const std::int64_t mine = -static_cast<std::int64_t>(static_cast<std::uint64_t>(k - lo) < static_cast<std::uint64_t>(own));
    return (k & mine) | (other & ~mine);
}

// one(part, i) for each row i of [lo, hi), part an
// std::integral_constant<int, (i - lo) % 4>: the partial (or copy) row i
// folds into is a constant in each call, so the caller's four partials stay
// in registers, not an array indexed at run time.
template <class One>
SEGRED_FORCE_INLINE void rows_in_fours(std::int64_t lo, std::int64_t hi, One& one) {
    using c0 = std::integral_constant<int, 0>;
    using c1 = std::integral_constant<int, 1>;
    using c2 = std::integral_constant<int, 2>;
    using c3 = std::integral_constant<int, 3>;
    std::int64_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        one(c0{}, i);
        one(c1{}, i + 1);
        one(c2{}, i + 2);
        one(c3{}, i + 3);
    }
    if (i < hi) one(c0{}, i++);
    if (i < hi) one(c1{}, i++);
    if (i < hi) one(c2{}, i++);
}

// Copies of its states a block of the block shape folds into: row lo + 4j + c
// of the block into copy c, the copies then combined as (0 + 2) + (1 + 3),
// for one-column sums and means of at most this many segments. A row's add
// then waits on the add four rows back into the same segment, not on the
// previous row's: with few segments a skewed input (Zipf, where one id takes
// a third of the rows) chained each add to the one before through memory.
// Combining the copies costs 3 adds a segment a block, small against the
// block's rows below this M.
constexpr int scatter_copies = 4;
constexpr std::int64_t max_copied_segments = 1024;

template <class F>
int block_copies(std::int64_t M, std::int64_t width) {
    return F::adds && width == 1 && M <= max_copied_segments ? scatter_copies : 1;
}

// What a scatter records per segment besides its states: the exact row count
// when counts() was asked for, else only whether any row came.
struct row_counts {
    big_array<std::int64_t> c;
    explicit row_counts(std::int64_t m) : c(make_zeroed_big_array<std::int64_t>(m)) {}
    void add(std::int64_t k, std::int64_t rows) { c[static_cast<std::size_t>(k)] += rows; }
    std::int64_t rows(std::int64_t k) const { return c[static_cast<std::size_t>(k)]; }
    void prefetch(std::int64_t k) const { prefetch_write(c.get() + k); }
};
struct row_seen {
    big_array<unsigned char> seen;  // bytes, not bits: marking one is a plain store, no read-modify-write
    explicit row_seen(std::int64_t m) : seen(make_zeroed_big_array<unsigned char>(m)) {}
    void add(std::int64_t k, std::int64_t) { seen[static_cast<std::size_t>(k)] = 1; }
    std::int64_t rows(std::int64_t k) const { return seen[static_cast<std::size_t>(k)]; }
    void prefetch(std::int64_t k) const { prefetch_write(seen.get() + k); }
};

// Nothing at all, when an empty segment's output is what its initial state
// gives anyway (a sum or count with a zero fill): every segment reads as
// having rows.
struct no_tally {
    explicit no_tally(std::int64_t) {}
    void add(std::int64_t, std::int64_t) {}
    std::int64_t rows(std::int64_t) const { return 1; }
    void prefetch(std::int64_t) const {}
};

// Many segments whose states do not fit in cache: a scatter straight into
// them would miss the cache on nearly every row. Instead rows are first
// partitioned by id range, stably, carrying the value (one column) or the
// row; then each partition folds its rows, in row order, into a slice of
// states small enough to stay in cache. Each segment thus sees exactly its
// rows in row order: the sequential result.
//
// The partition works a block of rows at a time (partition_block_bytes of
// entries): it counts the block's rows per partition, then writes each row's
// entry into the block's own region of the entries, grouped by partition.
// The fold of partition q then reads its group from every block in block
// order. So the ids are read from memory once (the count reads them a
// second time from the cache), and the pass writes into one block's region
// at a time, whose lines stay in cache while its streams fill them. A count
// of the whole input first, with every partition's rows laid out in one
// run, read the ids from memory twice and wrote dozens of streams across
// the whole array, a line buffer each in L1 flushed with non-temporal
// stores (on the 2-core development VM, 2^24 rows into 2^22 fp32 sums on
// one thread: 115-123 ms against 73-77 now; regions of 512 KiB ran 0.9-1.0x
// of 1 MiB ones).
constexpr std::int64_t partition_bytes = std::int64_t(1) << 21;
constexpr std::int64_t partition_block_bytes = std::int64_t(1) << 20;  // a 1 MiB L2
constexpr std::int64_t min_one_thread_parts = 32;  // see scatter_segments

// An entry carries the row only where the fold needs it: for wide rows (it
// reads the row's columns) and for reducers that record the winning row. A
// one-column sum or max moves 8 bytes a row (fp32), not 16. A one-column
// argmax of values of 4 bytes or less packs its row too into those 8 bytes
// (entry_form::packed): the row within its block (17 bits, blocks of 2^17
// entries) below the id within its partition (15 bits: (value, row) states
// take 2^15 ids a partition), so the entries, written once and read once,
// are half as large as with a 64-bit row. 2-core AMD EPYC VM, 2^24 fp32 rows
// into 2^22 argmax: see docs/PERFORMANCE.md.
enum class entry_form { value, row, packed };

template <class T>
constexpr int packed_row_bits();

// Each form made from a row's id within its partition (local), its row and
// its block's first row, and read back the same way (row_in: the row, given
// the block's first row; a value-only entry's reducer ignores the row).
template <class T, entry_form Form>
struct partition_entry {  // entry_form::row
    std::int64_t row;
    std::uint32_t local;  // id minus the partition's first id
    T value;              // the row's value when rows have one column
    static partition_entry make(std::uint32_t id, std::int64_t i, std::int64_t) { return {i, id, T{}}; }
    std::uint32_t id() const { return local; }
    std::int64_t row_in(std::int64_t) const { return row; }
};
template <class T>
struct partition_entry<T, entry_form::value> {
    std::uint32_t local;
    T value;
    static partition_entry make(std::uint32_t id, std::int64_t, std::int64_t) { return {id, T{}}; }
    std::uint32_t id() const { return local; }
    std::int64_t row_in(std::int64_t) const { return 0; }
};
template <class T>
struct partition_entry<T, entry_form::packed> {
    std::uint32_t key;  // local << packed_row_bits<T>() | the row minus its block's first row
    T value;
    static constexpr std::uint32_t row_mask() { return (std::uint32_t(1) << packed_row_bits<T>()) - 1; }
    static partition_entry make(std::uint32_t id, std::int64_t i, std::int64_t first_row) {
        return {id << packed_row_bits<T>() | static_cast<std::uint32_t>(i - first_row), T{}};
    }
    std::uint32_t id() const { return key >> packed_row_bits<T>(); }
    std::int64_t row_in(std::int64_t first_row) const { return first_row + (key & row_mask()); }
};

constexpr int bits_for(std::int64_t count) {  // bits that hold 0 .. count - 1
    int b = 0;
    while ((std::int64_t(1) << b) < count) ++b;
    return b;
}

template <class T, entry_form Form>
constexpr std::int64_t partition_block_rows() {
    return partition_block_bytes / static_cast<std::int64_t>(sizeof(partition_entry<T, Form>));
}

template <class T>
constexpr int packed_row_bits() {
    return bits_for(partition_block_rows<T, entry_form::packed>());
}

// How the rows are partitioned: ids per partition, a power of two (a shift,
// not a division, per row) whose states take about a quarter of
// partition_bytes.
template <class F>
struct partition_plan {
    using State = typename F::state;
    int shift = 6;
    std::int64_t part_ids = 0, parts = 0;
    bool with_row = false;
    partition_plan(std::int64_t M, std::int64_t width) : with_row(width != 1 || F::uses_row) {
        while ((std::int64_t(2) << shift) * static_cast<std::int64_t>(sizeof(State)) * width <= partition_bytes / 4) ++shift;
        part_ids = std::int64_t(1) << shift;
        parts = (M + part_ids - 1) / part_ids;
    }
};

template <class Tally, class F, class IdOf, class Emit>
void partitioned_scatter(const host_policy& p, std::int64_t n, std::int64_t M, std::int64_t width,
                         const partition_plan<F>& plan, const F& folder, IdOf&& id_of, Emit&& emit,
                         typename F::state* direct) {
    using T = typename F::value_type;
    // Packed entries are instantiated only for the reducers that record a
    // row, not for every reducer's wide rows.
    if constexpr (F::uses_row && sizeof(partition_entry<T, entry_form::packed>) == 8) {
        if (width == 1 && plan.shift + packed_row_bits<T>() <= 32) {
            partitioned_scatter<Tally, entry_form::packed>(p, n, M, width, plan, folder, id_of, emit, direct);
            return;
        }
    }
    if (plan.with_row)
        partitioned_scatter<Tally, entry_form::row>(p, n, M, width, plan, folder, id_of, emit, direct);
    else
        partitioned_scatter<Tally, entry_form::value>(p, n, M, width, plan, folder, id_of, emit, direct);
}

template <class Tally, entry_form Form, class F, class IdOf, class Emit>
void partitioned_scatter(const host_policy& p, std::int64_t n, std::int64_t M, std::int64_t width,
                         const partition_plan<F>& plan, const F& folder, IdOf&& id_of, Emit&& emit,
                         typename F::state* direct) {
    using State = typename F::state;
    using T = typename F::value_type;
    using entry = partition_entry<T, Form>;
    constexpr bool WithRow = Form == entry_form::row;
    const int shift = plan.shift;
    const std::int64_t part_ids = plan.part_ids, parts = plan.parts;
    constexpr std::int64_t block_rows = partition_block_rows<T, Form>();
    const std::int64_t blocks = (n + block_rows - 1) / block_rows;
    // Block b's rows of partition q: entries [group[b * (parts + 1) + q],
    // group[b * (parts + 1) + q + 1]), inside its region from b * block_rows.
    std::vector<std::int64_t> group(static_cast<std::size_t>(blocks * (parts + 1)));
    const big_array<entry> entries = make_big_array<entry>(n);
    parallel_chunks(p, blocks, 1, [&](std::int64_t b, std::int64_t) {
        const std::int64_t lo = b * block_rows, hi = std::min(n, lo + block_rows);
        // Counted into four tallies, row i into tally i % 4: consecutive
        // rows of one partition would otherwise chain each increment to the
        // one before through memory.
        std::vector<std::uint32_t> count(static_cast<std::size_t>(4 * parts), 0);
        std::uint32_t* const c = count.data();
        std::int64_t i = lo;
        for (; i + 4 <= hi; i += 4)
            for (std::int64_t u = 0; u < 4; ++u) {
                const std::int64_t k = id_of(i + u);
                if (k >= 0) ++c[u * parts + (k >> shift)];
            }
        for (; i < hi; ++i) {
            const std::int64_t k = id_of(i);
            if (k >= 0) ++c[k >> shift];
        }
        std::int64_t* const g = group.data() + b * (parts + 1);
        std::int64_t at = lo;
        for (std::int64_t q = 0; q < parts; ++q) {
            g[q] = at;
            at += std::int64_t(c[q]) + c[parts + q] + c[2 * parts + q] + c[3 * parts + q];
        }
        g[parts] = at;
        std::vector<std::int64_t> next_storage(g, g + parts);
        std::int64_t* const next = next_storage.data();
        // The row's entry; values through locals, which the stores below
        // cannot be taken to change.
        const T* const values = folder.values.data;
        const std::int64_t stride = folder.values.width;
        const bool one_column = width == 1;
        entry* const out = entries.get();
        // The block's region is cleared before its entries land in it:
        // memset (rep stosb) claims each line in cache without reading it,
        // where the scattered stores below would each first read their line
        // from memory. A fresh page comes zeroed by the kernel, and in cache,
        // but the entries' blocks are kept between calls (big_buffer.hpp);
        // without the clearing a kept block ran 2^24 rows into 2^22 fp32
        // sums at 0.81x of fresh pages (one thread, 2-core AMD EPYC VM),
        // fp64 at 0.63x, and with it 1.11x and 1.17x.
        std::memset(static_cast<void*>(out + lo), 0, static_cast<std::size_t>(hi - lo) * sizeof(entry));
        for (i = lo; i < hi; ++i) {
            const std::int64_t k = id_of(i);
            if (k < 0) continue;
            const std::int64_t q = k >> shift;
            entry e = entry::make(static_cast<std::uint32_t>(k - (q << shift)), i, lo);
            if (!WithRow || one_column) e.value = values[i * stride];
            out[next[q]++] = e;
        }
    });
    const state_array<State> states = make_states<State>(direct ? 0 : M * width);
    State* const all = direct ? direct : states.get();
    Tally tally(M);
    // Wide rows are read by the fold, each at a random place: their lines
    // are asked for fold_ahead entries early.
    constexpr std::int64_t fold_ahead = 16;
    const std::int64_t row_bytes = width * static_cast<std::int64_t>(sizeof(T));
    auto prefetch_row = [&](std::int64_t row) {
        const char* const at = reinterpret_cast<const char*>(folder.values.row(row));
        for (std::int64_t off = 0; off < row_bytes; off += 64) prefetch_read(at + off);
    };
    parallel_chunks(p, parts, 1, [&](std::int64_t q, std::int64_t) {
        const std::int64_t lo = q * part_ids, hi = std::min(M, lo + part_ids);
        State* st = all + lo * width;
        for (std::int64_t j = 0; j < (hi - lo) * width; ++j) st[j] = folder.init();
        for (std::int64_t b = 0; b < blocks; ++b) {
            const std::int64_t* const g = group.data() + b * (parts + 1) + q;
            const std::int64_t first_row = b * block_rows;
            for (std::int64_t e = g[0]; e < g[1]; ++e) {
                const entry& x = entries[static_cast<std::size_t>(e)];
                if constexpr (WithRow)
                    if (width != 1 && e + fold_ahead < g[1]) prefetch_row(entries[static_cast<std::size_t>(e + fold_ahead)].row);
                const std::uint32_t local = x.id();
                if (WithRow && width != 1)
                    folder.update(st + std::int64_t(local) * width, x.row_in(first_row));
                else
                    folder.update_value(st[local], x.value, x.row_in(first_row));
                tally.add(lo + local, 1);
            }
        }
        if (!direct)
            for (std::int64_t s = lo; s < hi; ++s) emit(s, all + s * width, tally.rows(s));
    });
}

// Folds rows into the states they pick, one row at a time. With `merge`,
// a run of rows that pick the same state is folded in a register and
// stored once: the same sequence of updates (so the same bits), without a
// store-to-load chain through memory when ids repeat, but with a branch
// that mispredicts when they do not; so merge is chosen from a sample.
template <class Tally, class F>
struct run_folder {
    using State = typename F::state;
    const F& folder;
    std::int64_t width;
    Tally& tally;
    bool merge;
    State* cur = nullptr;  // the state the open run folds into
    std::int64_t slot = -1, rows = 0;
    State reg{};
    void row(State* st, std::int64_t k, std::int64_t i) {  // st: the states of slot 0
        if (width != 1) {
            folder.update(st + k * width, i);
            tally.add(k, 1);
            return;
        }
        if (st + k != cur) {  // one column, merging (rows_of handles the rest)
            flush();
            cur = st + k;
            slot = k;
            reg = *cur;
        }
        folder.update_one(reg, i);
        ++rows;
    }
    void flush() {
        if (cur == nullptr) return;
        *cur = reg;
        tally.add(slot, rows);
        cur = nullptr;
        rows = 0;
    }
    // Rows [lo, hi) into the states they pick: row i into slot slot_of(i)
    // of st (skipped when negative). The one-column case without merging is
    // the hot loop of a scatter, so it gets its own loop, with the value
    // pointer and stride in registers: a row then costs the loads of its id
    // and value and one read-modify-write of its state, as a hand-written
    // scatter does. With Prefetch, the state of the row `ahead` rows on is
    // fetched early (states beyond the cache). FourRuns: merged one-column
    // runs are folded by runs_in_four (the promise for sums and means of
    // repeating ids), not in one register.
    template <bool Prefetch, bool FourRuns = false, class SlotOf>
    void rows_of(State* st, std::int64_t lo, std::int64_t hi, const SlotOf& slot_of) {
        auto prefetch = [&](std::int64_t i) { prefetch_ahead<Prefetch>(st, i, hi, slot_of); };
        if (width == 1 && !merge) {
            const auto* const v = folder.values.data;
            const std::int64_t stride = folder.values.width;
            for (std::int64_t i = lo; i < hi; ++i) {
                prefetch(i);
                const std::int64_t k = slot_of(i);
                if (k < 0) continue;
                folder.update_value(st[k], v[i * stride], i);
                tally.add(k, 1);
            }
            return;
        }
        if constexpr (FourRuns) {
            if (width == 1) {
                runs_in_four<Prefetch>(st, lo, hi, slot_of);
                return;
            }
        }
        for (std::int64_t i = lo; i < hi; ++i) {
            prefetch(i);
            const std::int64_t k = slot_of(i);
            if (k >= 0) row(st, k, i);
        }
        flush();
    }

    // The state of the row `ahead` rows after row i, fetched early (with
    // Prefetch; for states beyond the cache).
    template <bool Prefetch, class SlotOf>
    void prefetch_ahead(State* st, std::int64_t i, std::int64_t hi, const SlotOf& slot_of) {
        constexpr std::int64_t ahead = 32;
        if (!Prefetch || i + ahead >= hi) return;
        const std::int64_t kp = slot_of(i + ahead);
        if (kp < 0) return;
        prefetch_write(st + kp * width);
        tally.prefetch(kp);
    }

    // One column, merging, one copy of the states: a run of rows of one
    // slot (rows of skipped ids do not end it) is folded into 4 partials by
    // row, row lo + 4j + c into partial c, the first starting from the
    // slot's state and the others from init(), and stored as (0 + 2) +
    // (1 + 3) when the run ends: four chains of adds in flight, where one
    // register held all-equal ids into 16384 segments to one add a latency.
    // Out of line: inlined into rows_of, it moved that function's plain
    // loop and cost uniform ids into 16384 segments a tenth (one call a
    // block, so the call costs nothing).
    template <bool Prefetch, class SlotOf>
    SEGRED_HOST_NOINLINE void runs_in_four(State* st, std::int64_t lo, std::int64_t hi, const SlotOf& slot_of) {
        State r[4];
        std::int64_t open = -1, n = 0;  // the run's slot (-1: none) and rows
        auto close = [&] {
            if (open < 0) return;
            folder.combine(r[0], r[2]);
            folder.combine(r[1], r[3]);
            folder.combine(r[0], r[1]);
            st[open] = r[0];
            tally.add(open, n);
        };
        auto one = [&](auto part, std::int64_t i) {  // part: a constant, so r[c] stays a register
            constexpr int c = decltype(part)::value;
            prefetch_ahead<Prefetch>(st, i, hi, slot_of);
            const std::int64_t k = slot_of(i);
            if (k < 0) return;
            if (k != open) {
                close();
                open = k;
                n = 0;
                r[0] = st[k];
                r[1] = r[2] = r[3] = folder.init();
            }
            folder.update_one(r[c], i);
            ++n;
        };
        rows_in_fours(lo, hi, one);
        close();
    }

    // One column, no merging: rows [lo, hi) into scatter_copies copies of
    // the states, `span` apart, row lo + 4j + c into copy c (block_copies).
    // Unrolled by the copies, so each row's copy is a constant offset.
    template <class SlotOf>
    void rows_into_copies(State* st, std::int64_t span, std::int64_t lo, std::int64_t hi, const SlotOf& slot_of) {
        constexpr int C = scatter_copies;
        const auto* const v = folder.values.data;
        const std::int64_t stride = folder.values.width;
        auto one = [&](State* copy, std::int64_t i) {
            const std::int64_t k = slot_of(i);
            if (k < 0) return;
            folder.update_value(copy[k], v[i * stride], i);
            tally.add(k, 1);
        };
        std::int64_t i = lo;
        for (; i + C <= hi; i += C)
            for (int c = 0; c < C; ++c) one(st + c * span, i + c);
        for (int c = 0; i < hi; ++i, ++c) one(st + c * span, i);
    }

    // The same fold where ids repeat (merge): a run of rows of one slot is
    // folded in scatter_copies registers, one a copy, loaded when the run
    // begins and stored when it ends. The same adds as rows_into_copies, so
    // the same bits, with four chains of adds in flight rather than one (a
    // single register held all-equal ids to one add per add latency).
    template <class SlotOf>
    void runs_into_copies(State* st, std::int64_t span, std::int64_t lo, std::int64_t hi, const SlotOf& slot_of) {
        constexpr int C = scatter_copies;
        State r[C];
        std::int64_t open = -1, n = 0;  // the run's slot (-1: none) and rows
        auto close = [&] {
            if (open < 0) return;
            for (int c = 0; c < C; ++c) st[c * span + open] = r[c];
            tally.add(open, n);
        };
        auto one = [&](auto copy, std::int64_t i) {  // copy: a constant, so r[c] stays a register
            constexpr int c = decltype(copy)::value;
            const std::int64_t k = slot_of(i);
            if (k != open) {
                close();
                open = k;
                n = 0;
                if (k < 0) return;
                for (int d = 0; d < C; ++d) r[d] = st[d * span + k];
            } else if (k < 0) {
                return;
            }
            folder.update_one(r[c], i);
            ++n;
        };
        static_assert(C == 4, "rows_in_fours gives a row one of four copies");
        rows_in_fours(lo, hi, one);
        close();
    }
};

// F is a row folder (row_fold.hpp). id_of(i): segment of row i, or -1 to
// skip it. emit(s, st, rows) receives segment s's states and its number of
// rows; without exact counts (Tally = row_seen), rows is only 0 for empty.
//
// direct, when not null, is where the final states go: the output itself,
// when a segment's output is its state unchanged and an empty segment's is
// the initial state (a zero-filled sum into the accumulation type, with no
// tally). The shapes that give the sequential result then fold straight into
// it and skip both a state array as large as the output (and its page
// faults) and the pass that copies it out.
template <class Tally, class F, class IdOf, class Emit>
void scatter_segments(const host_policy& p, std::int64_t n, std::int64_t M, std::int64_t width, const F& folder,
                      IdOf&& id_of, Emit&& emit, typename F::state* direct = nullptr) {
    using State = typename F::state;
    if (M <= 0) return;
    const std::int64_t block_rows = scatter_block_rows(n, M, width);
    const std::int64_t blocks = (n + block_rows - 1) / block_rows;
    const std::int64_t span = M * width;

    // Whether more than num / den of the first rows from lo (at most 1024)
    // repeat the id before them. The block shape folds runs in registers
    // only where runs of one id average 16 rows or more (15 / 16): shorter
    // runs of random length mispredict a branch at each run's end, which
    // costs more than the plain loop's adds chained through a segment's
    // state (2-core AMD EPYC VM, one thread, runs of 1 to 4 rows into 16
    // and 16384 segments: 75 and 77 ms merged, 20 and 34 ms plain). The
    // owned ranges merge where most rows repeat (1 / 2).
    auto repeat_share_above = [&](std::int64_t lo, std::int64_t hi, std::int64_t num, std::int64_t den) {
        const std::int64_t end = std::min(hi, lo + 1024);
        std::int64_t same = 0;
        for (std::int64_t i = lo + 1; i < end; ++i) same += id_of(i) == id_of(i - 1);
        return den * same > num * (end - lo);
    };

    if (blocks >= min_scatter_blocks) {
        // Blocks' states are `stride` apart: at least a cache line between
        // two blocks, so threads folding neighbouring blocks never write the
        // same line (with M = 16 a block's states are one line or less).
        // A block's copies (block_copies) lie back to back; the first holds
        // their combination.
        const int copies = block_copies<F>(M, width);
        const std::int64_t stride = copies * span + (64 + static_cast<std::int64_t>(sizeof(State)) - 1) / static_cast<std::int64_t>(sizeof(State));
        const state_array<State> partial = make_states<State>(blocks * stride);
        std::vector<Tally> counts;
        counts.reserve(static_cast<std::size_t>(blocks));
        for (std::int64_t b = 0; b < blocks; ++b) counts.emplace_back(M);
        // Two loops, not one with a branch on the copies: in one, the
        // compiler took the block loop out of line and held all-equal ids
        // into 16384 segments (one copy) to 0.85x (0.72x on two threads).
        if (copies == 1) {
            parallel_chunks(p, blocks, 1, [&](std::int64_t b, std::int64_t) {
                State* st = partial.get() + b * stride;
                for (std::int64_t j = 0; j < span; ++j) st[j] = folder.init();
                const std::int64_t lo = b * block_rows, hi = std::min(n, (b + 1) * block_rows);
                const bool long_runs = repeat_share_above(lo, hi, 15, 16);
                run_folder<Tally, F> fold{folder, width, counts[static_cast<std::size_t>(b)], long_runs};
                fold.template rows_of<false, F::adds>(st, lo, hi, id_of);
            });
        } else {
            parallel_chunks(p, blocks, 1, [&](std::int64_t b, std::int64_t) {
                State* st = partial.get() + b * stride;
                for (std::int64_t j = 0; j < copies * span; ++j) st[j] = folder.init();
                const std::int64_t lo = b * block_rows, hi = std::min(n, (b + 1) * block_rows);
                const bool long_runs = repeat_share_above(lo, hi, 15, 16);
                run_folder<Tally, F> fold{folder, width, counts[static_cast<std::size_t>(b)], long_runs};
                if (fold.merge)
                    fold.runs_into_copies(st, span, lo, hi, id_of);
                else
                    fold.rows_into_copies(st, span, lo, hi, id_of);
                static_assert(scatter_copies == 4, "combined as (0 + 2) + (1 + 3)");
                for (std::int64_t j = 0; j < span; ++j) {
                    folder.combine(st[j], st[2 * span + j]);
                    folder.combine(st[span + j], st[3 * span + j]);
                    folder.combine(st[j], st[span + j]);
                }
            });
        }
        // Combine in block order; segments in chunks so each block's states
        // are read as runs of consecutive memory.
        parallel_chunks(p, M, segments_per_chunk, [&](std::int64_t lo, std::int64_t hi) {
            const state_array<State> acc = make_states<State>((hi - lo) * width);
            std::vector<std::int64_t> rows(static_cast<std::size_t>(hi - lo));
            for (std::int64_t s = lo; s < hi; ++s) rows[static_cast<std::size_t>(s - lo)] = counts[0].rows(s);
            std::copy(partial.get() + lo * width, partial.get() + hi * width, acc.get());
            for (std::int64_t b = 1; b < blocks; ++b) {
                const State* st = partial.get() + b * stride;
                const Tally& cnt = counts[static_cast<std::size_t>(b)];
                for (std::int64_t s = lo; s < hi; ++s) {
                    if (cnt.rows(s) == 0) continue;
                    rows[static_cast<std::size_t>(s - lo)] += cnt.rows(s);
                    for (std::int64_t f = 0; f < width; ++f)
                        folder.combine(acc[(s - lo) * width + f], st[s * width + f]);
                }
            }
            for (std::int64_t s = lo; s < hi; ++s)
                emit(s, acc.get() + (s - lo) * width, rows[static_cast<std::size_t>(s - lo)]);
        });
        return;
    }

    // Many segments whose states exceed the cache: partition first, unless
    // ids mostly repeat their predecessor (then the owned-range loop folds
    // whole runs in a register and barely touches memory). One thread
    // partitions only one column, and only from min_one_thread_parts
    // partitions on: below, the states (8 MiB of fp32 sums at most) stay in
    // the last-level cache and the plain scatter's misses cost less than the
    // pass and the fold (on the 2-core VM, 2^24 rows into 2^20 / 2^21 fp32
    // sums: 40 / 49 ms against 77 partitioned; into 2^22, 141 against 74);
    // wide rows, read again in the fold, gained nothing measurable. Both
    // shapes give each segment its rows in row order, so the choice --
    // unlike the choice of the block shape -- may depend on the thread
    // count: not a bit changes.
    const std::int64_t threads = thread_count(p);
    const bool repeats = repeat_share_above(0, n, 1, 2);
    const partition_plan<F> plan(M, width);
    if (static_cast<std::int64_t>(sizeof(State)) * span > partition_bytes && !repeats &&
        (threads > 1 || (width == 1 && plan.parts >= min_one_thread_parts))) {
        partitioned_scatter<Tally>(p, n, M, width, plan, folder, id_of, emit, direct);
        return;
    }

    // Owned ranges: thread t folds the rows of segments [t*M/T, (t+1)*M/T),
    // range ends rounded to 64 segments so no two threads write the same
    // cache line of the tally. With several owners, rows of other threads'
    // segments go to private spare slots (their own tally line too), so the
    // loop has no data-dependent branch; a single owner only skips the rows
    // that have no segment (drop), and may fold straight into `direct`.
    // Row i takes spare i % owned_spares: into one spare, every other row
    // of two owners waited on the add before it through memory (2-core AMD
    // EPYC VM, 2^21 rows into 2^17 fp32 sums: 11.5 ms on two threads, 3.1
    // on one). Where runs are merged (repeats), other owners' rows all go
    // to one spare, which keeps a stretch of them one run.
    // Repeating ids with a direct output take one owner: every owner reads
    // every row, so with runs folded in a register more owners would only
    // add reads, and a single one spares the state array and its copy-out.
    const std::int64_t owners =
        direct && repeats ? 1 : std::max<std::int64_t>(1, std::min<std::int64_t>(threads, M / 64));
    if (owners > 1) direct = nullptr;
    const std::int64_t spare0 = (M + 63) / 64 * 64;  // thread t's spare slot: spare0 + 64 t
    const state_array<State> states = make_states<State>(direct ? 0 : (spare0 + 64 * owners) * width);
    State* const st = direct ? direct : states.get();
    Tally tally(spare0 + 64 * owners);
    auto range_lo = [&](std::int64_t t) { return t == owners ? M : (M * t / owners) / 64 * 64; };
    parallel_blocks(p, owners, [&](std::int64_t t) {
        const std::int64_t lo = range_lo(t), own = range_lo(t + 1) - lo;
        const std::int64_t spare = owners == 1 ? -1 : spare0 + 64 * t;
        for (std::int64_t j = lo * width; j < (lo + own) * width; ++j) st[j] = folder.init();
        if (spare >= 0)
            for (std::int64_t f = 0; f < owned_spares * width; ++f) st[spare * width + f] = folder.init();
        run_folder<Tally, F> fold{folder, width, tally, repeats};
        // With several owners the pick is a mask (owned_or); a single owner
        // keeps a branch, which it predicts (only dropped rows take it), and
        // which costs it less than the mask. Repeating one-column sums and
        // means fold each run into four partials (runs_in_four), as the
        // block shape does: one register held all-equal ids to one add a
        // latency. Runs must then be the same whoever owns what, so a
        // dropped row, which does not end a run of one owner, does not go
        // to a spare slot (which would end it) but is skipped.
        if (owners == 1) {
            fold.template rows_of<true, F::adds>(st, 0, n, [&](std::int64_t i) {
                const std::int64_t k = id_of(i);
                return static_cast<std::uint64_t>(k) < static_cast<std::uint64_t>(own) ? k : -1;
            });
            return;
        }
        if (repeats) {
            fold.template rows_of<true, F::adds>(st, 0, n, [&](std::int64_t i) {
                const std::int64_t k = id_of(i);
                return k < 0 ? -1 : owned_or(k, lo, own, spare);
            });
            return;
        }
        fold.template rows_of<true>(st, 0, n,
                                    [&](std::int64_t i) { return owned_or(id_of(i), lo, own, spare + (i & (owned_spares - 1))); });
    });
    if (direct) return;
    parallel_chunks(p, M, std::int64_t(1) << 12, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t s = lo; s < hi; ++s) emit(s, st + s * width, tally.rows(s));
    });
}

} // namespace host_detail
} // namespace segred
