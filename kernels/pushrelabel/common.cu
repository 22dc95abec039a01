// Exact push-relabel max-flow on 2D grids (4- or 8-connected), CUDA Cuts style, tiled.
// One program in parts, compiled as their concatenation in the order of
// `PUSH_RELABEL_PARTS` (src/maxflow/cuda/kernels.rs): common.cu (this overview, sizes,
// parameter blocks, helpers), barrier.cu, queue.cu, start.cu, relabel.cu, discharge.cu,
// passes.cu, persistent.cu.
//
// Layout: the grid is padded to whole TW x TH tiles and every per-pixel array is stored
// tile by tile (tile t holds pixels [t*TP, (t+1)*TP), row-major inside the tile), so one
// tile is one contiguous, coalesced chunk. TW is 32; TH is 32 or 16 (the engine compiles
// one module per tile height and takes half-height tiles, two blocks per SM, for grids
// of few tiles). Per pixel: residual capacity towards each
// neighbour (u32; a neighbour pair's residuals sum to c_uv + c_vu < 2^32), residual
// capacity to the sink after folding the terminal arcs (u32), excess (u64) and height
// (u32, INF = cannot reach the sink).
//
// Schedule (one round = one discharge phase per tile colour, or one phase for all tiles in
// the concurrent variant):
//  * discharge: a block loads an active tile plus its one-pixel halo of heights into
//    shared memory and runs synchronous push / pull+relabel steps there (tile-local
//    discharge) until no pixel of the tile is active or a step budget is spent, with a
//    region relabel (BFS inside the tile from the sink and the halo heights) at the start
//    of a visit and every few steps. Flow pushed across the tile border goes to a mailbox
//    slot of the sending tile (one per border arc); the receiving tile takes it (excess
//    and reverse residual) when it is next loaded. So tiles never write each other's
//    state and any set of tiles may run at once: with colours (a checkerboard: tiles of
//    one colour share no edge) the halo heights are frozen during a phase, but for the
//    corner heights of 8C diagonal neighbours; in the concurrent variant all may be
//    stale, which costs work, never exactness. Tiles with
//    neither active pixels nor mail are skipped and revisited every K rounds.
//  * global relabel: exact BFS from the sink in the residual graph as a fixpoint of
//    tile-local relaxations, on the device (no host copy per level). Inside a tile the
//    BFS runs as Jacobi iterations by every warp or, in square tiles, by one warp on bit
//    rows (bit_bfs; also the 4C region relabels there). A tile's initial
//    relaxation takes its mail, builds the residual bits and starts from the pixels with
//    a t-link residual; later ones lower border pixels from the halo and relax again.
//    Host-driven scheme: level-synchronous rounds (round 0 relaxes every tile alone,
//    later rounds the tiles whose halo changed, until a round changes no border).
//    Persistent solve: one pass with no barrier inside: every tile relaxes once, and a
//    tile whose border got lower has just the neighbours whose pixels can use it relax
//    again (through a work queue, or on small grids by waking their owner blocks);
//    heights carry the epoch of their relabel (gh) so that a tile never reads a
//    neighbour's stale ones (chaotic relaxation, same fixpoint). Active flags come out of
//    the same relaxations. On seeded 4C energies in square tiles a relabel between two
//    whole ones may stop its wave at a cap above the excess (relabel_cap).
//  * termination: after an exact (whole) global relabel, no pixel with excess has a finite
//    height, i.e. no active pixel can reach the sink: the preflow's value is maximum and
//    the pixels at INF (cannot reach t) are the source side of a minimum cut. No gap
//    heuristic: gaps seldom form with excess above them (kernels/NOTES.md, gap heuristic).
//
// Every entry point exists in a persistent cooperative form (pr_solve*, the whole solve
// in one launch with a grid barrier between passes, or on small 4C grids only after each
// global relabel: RELABEL_FOLLOWS) and as single passes for the host-driven scheme.
//
// Kernels are written so that every pixel loop runs over the PPT = TP / BDIM pixels a
// thread owns (one on the GPU) and per-pixel state that crosses a barrier is kept per
// owned pixel: the same source then also runs with one thread per block on the host (the
// development emulation), which is one legal schedule. On the GPU a thread owns one
// pixel: a tile step is a short chain of dependent instructions between two barriers,
// bound by latency, not issue, and wants every warp it can get (kernels/NOTES.md, pixels
// per thread).
//
// Each choice, the alternatives tried and where their figures are: kernels/NOTES.md.

#ifndef LIVECUT_EMU
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;
#ifndef BDIM
#define BDIM TP  // threads per tile block (one per pixel); any multiple of 32 dividing TP
#endif
#define DYN_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

#define TW 32
#ifndef TH
#define TH 32  // tile height: 32, or 16 (set by the engine for grids of few tiles)
#endif
#define TP (TW * TH)
#define HW (TW + 2)
#define HH (TH + 2)
#define HP (HW * HH)
#define NHALO (2 * HW + 2 * TH)
#define PSLOTS 64  // mailbox slots per tile and direction (a column or a row of the border)
#define INF 0x7fffffffu
#define MAX_COLOURS 2
#ifdef LIVECUT_PROFILE
#define LOG_ROWS 128
#define LOG_COLS 8
#endif
#define BIT_SINK 0x100u    // residual bits: t-link residual
#define BIT_EXCESS 0x200u  // ... the pixel holds excess
// Calm tiles wait for a first wake in global relabels by the queue (lazy_skip): 8C square
// tiles only (the large seeded 8C grids take them).
#define CALM(D) ((D) == 8 && TH == 32)
// Capped global relabels (relabel_cap): 4C square tiles only (the large seeded 4C grids
// take them).
#define CAPS(D) ((D) == 4 && TH == 32)
// A calm tile's INF after a relabel (fill_unreached) claims t out of reach, which a capped
// relabel could not: the two never meet (8C / 4C).
static_assert(!(CALM(4) && CAPS(4)) && !(CALM(8) && CAPS(8)), "calm tiles in a capped relabel");

// Profiling counters (cycle counts, the relabel log) exist only where the engine is built
// to measure (LIVECUT_PROFILE): PROFILE(statement) compiles the statement there only.
#ifdef LIVECUT_PROFILE
#define PROFILE(...) __VA_ARGS__
#else
#define PROFILE(...)
#endif

// Status codes written to Ctl::status.
#define ST_RUNNING 0u
#define ST_DONE 1u
#define ST_HANG 2u
#define ST_ROUND_CAP 3u

// Words of Params::sums (pr_reparam*): the offsets' total, the capacities that changed,
// and the pixels whose capacities plus offset would not fit 32 bits (then the host solves
// afresh).
#define SUM_OFFSET 0
#define SUM_CHANGED 1
#define SUM_OVERFLOW 2
#define REPARAM_SUMS 3

// Counters shared by all blocks. Totals only grow (active/mail counts follow their flags);
// decisions compare snapshots that the last block to reach a grid barrier copies, so every
// block decides the same.
struct Snap {
    u64 relabels;
    u32 active_tiles;
    u32 mail_tiles;
    u32 stamp;         // pass number after the barrier
    u32 gr_epoch;
    u32 more;          // the flow-rate rule asks for another discharge round
    u32 late;          // the solve's budget is spent (Params::budget_ns)
};

struct Ctl {
    u64 sink_flow;     // flow delivered to t (includes the folded terminal flow)
    u64 relabels;      // local relabels, total
    u64 steps;         // tile push/relabel steps, total (cost measure)
    u64 bfs_iters;     // tile BFS iterations, total (cost measure)
#ifdef LIVECUT_PROFILE
    u64 cyc_discharge; // SM cycles inside discharge visits, summed over tiles
    u64 cyc_bfs;       // SM cycles inside BFS tile relaxations, summed over tiles
    u64 path_bfs;      // block 0's cycles from barrier to barrier in BFS passes (critical path)
    u64 path_discharge;// ... in discharge passes
    u64 bfs_wait;      // cycles blocks waited for work in global-relabel passes, summed over blocks
    u64 barrier_cycles;// cycles blocks spent in grid barriers, summed over blocks
#endif
    u64 bfs_pops;      // tiles taken from the queue in global-relabel passes (ends of pass included)
    u64 rate_t0;       // flow-rate rule (persistent solve): ns timer and sink flow when the
    u64 rate_f0;       // ... current global relabel began,
    u64 rate_t;        // ... and at the last round's end
    u64 rate_f;
    u64 rate_w0;       // ... local relabels when the global relabel ended (work cap)
    u32 active_tiles;  // tiles whose active flag is set
    u32 mail_tiles;    // tiles whose mail flag is set
    u32 gr_changes;    // BFS tile visits that left a finite or changed border, total
    u32 tile_visits;   // tiles discharged (at least one step), total
    u32 tile_loads;    // tiles loaded for a discharge visit (idle ones included), total
    u32 rounds;        // discharge rounds
    u32 global_relabels;
    u32 bfs_rounds;
    u32 bfs_tiles;     // tiles relaxed in BFS rounds, total
    u32 status;
    u32 bar_count;     // arrivals at grid barriers (reset to 0 once past 2^31)
    u32 bar_gen;       // grid barriers released (0 again where bar_count was reset)
    u32 q_head;        // work queue of the persistent solve: next ticket (slot) to hand out; tile claims of a discharge phase
    u32 q_tail;        // ... next slot to fill
    u32 q_pending;     // ... items queued or being worked on, plus one token per block
    u32 stamp;         // ... pass number (queued flags hold the stamp of their pass)
    u32 gr_epoch;      // global relabels started (tile heights carry the epoch they belong to)
    u32 pad;           // an even number of u32: snap stays 8-byte aligned
    Snap snap;
    u32 gr_hact[2];    // by relabel epoch parity: the highest height of a pixel with excess
                       // after it (relabel_cap)
    u32 gr_capped;     // global relabels whose BFS stopped at a cap
    u32 pad2;
    u64 deadline_ns;   // global timer at which the budget is spent (Params::budget_ns)
    u64 cut_capacity;  // capacity of a stopped solve's cut in the input capacities (pr_cut*)
    u32 stopped;       // the solve stopped at its budget after a whole global relabel
    u32 pad3;
};

struct Params {
    u32 width, height;             // the real grid
    u32 tiles_x, tiles_y, ntiles;  // padded grid in tiles
    u32 npix;                      // ntiles * TP
    u32 hmax;                      // heights >= hmax cannot reach t (pixels + 1)
    u32 colour_start[MAX_COLOURS + 1];  // tiles of each checkerboard colour in colour_tiles
    u32 step_budget;               // push/relabel steps per tile visit
    u32 region_every;              // region relabel after this many steps without outflow
    u32 revisit_every;             // visit idle tiles every K rounds (0: never)
    u32 gr_rounds;                 // global relabel after at most this many rounds
    u32 gr_work_num;               // ... or after relabels > npix * num / 16
    u32 max_rounds;                // safety cap on discharge rounds
    u32 nblocks;                   // blocks of a persistent launch
    u32 concurrent;                // 1: all tiles in one phase per round
    u32 qcap;                      // queue slots (a power of two > ntiles + nblocks)
    u32 gr_owners;                 // 1: global relabels by tile owners and wakes, 0: by the queue
    u32 owned_discharge;           // 1: discharge rounds by tile owners, no grid barrier inside
    u32 gr_rate_max;               // flow-rate rule: 0 off, else at most this many rounds per relabel
    u32 gr_rate_pct;               // ... another round while the last one's flow rate is at least
                                   //     this percentage of the rate since the relabel began
    u32 gr_few_tiles;              // discharge by owners: after a relabel that found at most this
    u32 gr_few_rounds;             // ... many active tiles, this many rounds (else gr_rounds)
    u32 gr_cap_margin;             // capped relabels (relabel_cap): cap above the last highest
                                   //     active height, 0: every relabel whole
    u32* res;            // D * npix residuals, res[d * npix + i]
    u32* tres;           // npix
    u64* exc;            // npix
    u32* h;              // npix
    u16* rmask;          // npix: bit d = res[d] > 0, BIT_SINK, BIT_EXCESS (global relabel)
    u64* gh;             // npix: a global relabel's view of the pixel for its neighbours (gh_pack)
    u32* pend;           // ntiles * D * PSLOTS: flow pushed out across the border, not taken yet
    u32* tile_active;    // ntiles: the tile has active pixels
    u32* tile_mail;      // ntiles: a neighbour left flow in its mailbox for the tile
    u32* tile_dirty;     // 2 * ntiles (BFS rounds, by round parity)
    u32* tile_round;     // ntiles: discharge rounds the tile is done with (discharge by owners)
    u32* tile_calm;      // ntiles: no t-link residual and no visit since the tile's last
                         // initial relaxation (see lazy_skip)
    u32* queue;          // qcap: tile id + 1 per filled slot, 0 = empty
    u32* tile_q;         // 2 * ntiles: the queue's: stamp of the pass the tile is queued in, GR
                         // epoch of its last initial relaxation; the owners': wakes the tile
                         // got, wakes its owner took
    u32* activity;       // ntiles: discharge visits with work
#ifdef LIVECUT_PROFILE
    u64* log;            // LOG_ROWS x LOG_COLS: counters after each global relabel (persistent solve)
#endif
    const u32* colour_tiles;  // ntiles tile ids grouped by colour
    Ctl* ctl;
    const int* in_src;   // row-major W*H input capacities
    const int* in_sink;
    const int* in_edges; // D * W*H
    unsigned char* mask; // row-major W*H output: 255 = cannot reach t
    const int* old_src;  // row-major input capacities of the previous solve (pr_reparam*)
    const int* old_sink;
    const int* old_edges;
    u32* off;            // npix: constant added to both terminal capacities of the pixel
    u64* sums;           // REPARAM_SUMS words: what pr_reparam* added up
    u64 budget_ns;       // the persistent solve stops after the first whole global relabel
                         // this long after it began (NO_BUDGET: runs to the maximum flow)
};

// Params::budget_ns of a solve that runs to the maximum flow.
#define NO_BUDGET 0xffffffffffffffffull

// ---------------------------------------------------------------------------------
// Small helpers

template <int d> struct Dir;
template <> struct Dir<0> { enum { dx = 1, dy = 0 }; };
template <> struct Dir<1> { enum { dx = -1, dy = 0 }; };
template <> struct Dir<2> { enum { dx = 0, dy = 1 }; };
template <> struct Dir<3> { enum { dx = 0, dy = -1 }; };
template <> struct Dir<4> { enum { dx = 1, dy = 1 }; };
template <> struct Dir<5> { enum { dx = -1, dy = -1 }; };
template <> struct Dir<6> { enum { dx = -1, dy = 1 }; };
template <> struct Dir<7> { enum { dx = 1, dy = -1 }; };

__device__ __forceinline__ int dir_dx(int d) {
    return d == 0 ? 1 : d == 1 ? -1 : d == 2 ? 0 : d == 3 ? 0 : d == 4 ? 1 : d == 5 ? -1 : d == 6 ? -1 : 1;
}
__device__ __forceinline__ int dir_dy(int d) {
    return d == 0 ? 0 : d == 1 ? 0 : d == 2 ? 1 : d == 3 ? -1 : d == 4 ? 1 : d == 5 ? -1 : d == 6 ? 1 : -1;
}

__device__ __forceinline__ u32 umin32(u32 a, u32 b) { return a < b ? a : b; }

#ifndef LIVECUT_EMU
// Stores the bits of one tile row (one warp: pixel i's lane holds `bit`) as a word.
// Every lane of the warp must call it.
__device__ __forceinline__ void row_word_store(u32* words, u32 i, u32 bit) {
    const u32 w = __ballot_sync(0xffffffffu, bit != 0u);
    if ((i % 32u) == 0u) words[i / 32u] = w;
}
// Adds every lane's v to *counter (ORs it into *word) with one atomic per warp instead of
// one per lane: the lanes' atomics on one shared word serialise. Every lane of the warp
// must call them.
__device__ __forceinline__ void warp_add(u32* counter, u32 v) {
    v = __reduce_add_sync(0xffffffffu, v);
    if ((threadIdx.x % 32u) == 0u && v) atomicAdd(counter, v);
}
__device__ __forceinline__ void warp_or(u32* word, u32 v) {
    v = __reduce_or_sync(0xffffffffu, v);
    if ((threadIdx.x % 32u) == 0u && v) atomicOr(word, v);
}
__device__ __forceinline__ void warp_add(u64* counter, u64 v) {
#pragma unroll
    for (u32 o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x % 32u) == 0u && v) atomicAdd((unsigned long long*)counter, (unsigned long long)v);
}
#endif
// Adds every thread's v to a shared total of the block (ORs it into a shared word; every
// thread must call them): on 8C with one atomic per warp, on 4C with one per thread that
// has something to add, the faster form on each (kernels/NOTES.md, shared_add).
template <int D, class T>
__device__ __forceinline__ void shared_add(T* total, T v) {
    if (D == 8)
        warp_add(total, v);
    else if (v)
        atomicAdd(total, v);
}
template <int D>
__device__ __forceinline__ void shared_or(u32* word, u32 v) {
    if (D == 8)
        warp_or(word, v);
    else if (v)
        atomicOr(word, v);
}
__device__ __forceinline__ u64 umin64(u64 a, u64 b) { return a < b ? a : b; }

#ifndef LIVECUT_EMU
#ifdef LIVECUT_PROFILE
__device__ __forceinline__ u64 cycles() { return (u64)clock64(); }
#endif

// Loads and stores of words that other blocks read or write meanwhile, with their memory
// order at GPU scope (ORDER: relaxed, acquire, release), for 32- and 64-bit words.
// Fences stay __threadfence(): acq_rel fences, relaxed polls with one fence after the
// wait, and release atomics for wakes and mail were no faster (kernels/NOTES.md,
// GPU_LOAD).
#define GPU_LOAD(NAME, ORDER, T, BITS, REG)                                                  \
    __device__ __forceinline__ T NAME(const T* p) {                                          \
        T v;                                                                                 \
        asm volatile("ld." ORDER ".gpu.global.u" BITS " %0, [%1];" : "=" REG(v) : "l"(p) : "memory"); \
        return v;                                                                            \
    }
#define GPU_STORE(NAME, ORDER, T, BITS, REG)                                                 \
    __device__ __forceinline__ void NAME(T* p, T v) {                                        \
        asm volatile("st." ORDER ".gpu.global.u" BITS " [%0], %1;" ::"l"(p), REG(v) : "memory"); \
    }
GPU_LOAD(ld_relaxed, "relaxed", u32, "32", "r")
GPU_LOAD(ld_relaxed, "relaxed", u64, "64", "l")
GPU_LOAD(ld_acquire, "acquire", u32, "32", "r")
GPU_STORE(st_relaxed, "relaxed", u32, "32", "r")
GPU_STORE(st_relaxed, "relaxed", u64, "64", "l")
GPU_STORE(st_release, "release", u32, "32", "r")

// Atomic add with acquire and release order at GPU scope; returns the old value.
__device__ __forceinline__ u32 atom_add_acq_rel(u32* p, u32 v) {
    u32 old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}
#endif

// Blocked index of padded-grid pixel (gx, gy).
__device__ __forceinline__ u32 blocked_index(const Params& p, u32 gx, u32 gy) {
    return ((gy / TH) * p.tiles_x + gx / TW) * TP + (gy % TH) * TW + (gx % TW);
}

// Halo slot k -> local coordinates (-1..TW, -1..TH) of the ring around the tile.
__device__ __forceinline__ void halo_coord(u32 k, int& lx, int& ly) {
    if (k < HW) {
        lx = (int)k - 1;
        ly = -1;
    } else if (k < 2 * HW) {
        lx = (int)(k - HW) - 1;
        ly = TH;
    } else if (k < 2 * HW + TH) {
        lx = -1;
        ly = (int)(k - 2 * HW);
    } else {
        lx = TW;
        ly = (int)(k - 2 * HW - TH);
    }
}

// Height of the pixel at tile-local (lx, ly) of tile (tx, ty); INF off the padded grid.
__device__ __forceinline__ u32 halo_height(const Params& p, u32 tx, u32 ty, int lx, int ly) {
    const int gx = (int)(tx * TW) + lx;
    const int gy = (int)(ty * TH) + ly;
    if (gx < 0 || gy < 0 || gx >= (int)(p.tiles_x * TW) || gy >= (int)(p.tiles_y * TH)) return INF;
    return ld_relaxed(&p.h[blocked_index(p, (u32)gx, (u32)gy)]);
}

// Halo slot of local coordinates (lx, ly) on the ring around the tile (halo_coord's inverse).
__device__ __forceinline__ u32 halo_slot(int lx, int ly) {
    if (ly < 0) return (u32)(lx + 1);
    if (ly >= TH) return HW + (u32)(lx + 1);
    if (lx < 0) return 2 * HW + (u32)ly;
    return 2 * HW + TH + (u32)ly;
}

__device__ __forceinline__ bool inside_tile(int lx, int ly) {
    return lx >= 0 && lx < TW && ly >= 0 && ly < TH;
}

// Sets tile t's active flag, keeping Ctl::active_tiles equal to the number of set flags.
// Only the block working on the tile writes its flag, so `old` is what the block read.
__device__ __forceinline__ void set_tile_active(const Params& p, u32 t, u32 old, u32 active) {
    if (old == active) return;
    p.tile_active[t] = active;
    atomicAdd(&p.ctl->active_tiles, active ? 1u : 0xffffffffu);
}

// Mail: the sender adds to its mailbox slots, fences, then raises the receiver's flag; the
// receiver takes the flag, fences, then empties the slots. Flow left in a slot therefore
// always has its flag raised, and a receiver that saw no flag may skip the slots. Flags
// and slots are exchanged without a load first: a visit waits on each of these round
// trips, and a load before the exchange was one more wherever there was mail
// (kernels/NOTES.md, send_mail).
__device__ __forceinline__ void send_mail(const Params& p, u32 t) {
    if (atomicExch(&p.tile_mail[t], 1u) == 0u) atomicAdd(&p.ctl->mail_tiles, 1u);
}
__device__ __forceinline__ u32 take_mail(const Params& p, u32 t) {
    const u32 had = atomicExch(&p.tile_mail[t], 0u);
    if (had) atomicAdd(&p.ctl->mail_tiles, 0xffffffffu);
    return had;
}

// Mailbox slot of the arc leaving pixel (lx, ly) of tile t in direction d (which must
// leave the tile): indexed by the row when it leaves sideways, else by the column.
template <int D>
__device__ __forceinline__ u32 pend_index(u32 t, int d, int lx, int ly) {
    const int nx = lx + dir_dx(d);
    const bool xout = nx < 0 || nx >= TW;
    return (t * D + (u32)d) * PSLOTS + (u32)(xout ? ly : TW + lx);
}

// Takes the flow neighbours left for border pixel (lx, ly) of tile (tx, ty) arriving along
// its arc in direction d: the mailbox slot of the neighbour's reverse arc, emptied atomically.
template <int D>
__device__ __forceinline__ u32 take_pending(const Params& p, u32 tx, u32 ty, int lx, int ly, int d) {
    const int gx = (int)(tx * TW) + lx + dir_dx(d), gy = (int)(ty * TH) + ly + dir_dy(d);
    if (gx < 0 || gy < 0 || gx >= (int)(p.tiles_x * TW) || gy >= (int)(p.tiles_y * TH)) return 0;
    const u32 nt = (u32)(gy / TH) * p.tiles_x + (u32)(gx / TW);
    const u32 slot = pend_index<D>(nt, d ^ 1, gx % TW, gy % TH);
    return atomicExch(&p.pend[slot], 0u);
}

__device__ __forceinline__ bool on_border(u32 i) {
    const u32 lx = i % TW, ly = i / TW;
    return lx == 0 || ly == 0 || lx == TW - 1 || ly == TH - 1;
}

__device__ __forceinline__ int halo_index(u32 i) { return (int)((i / TW + 1) * HW + i % TW + 1); }

// Index of pixel i's neighbour in direction d, inside the tile (the caller knows it is)
// and in the halo-indexed height arrays (from i's halo index hi): the index plus a
// constant, so a thread's loads of its neighbours take one base register and immediate
// offsets instead of a row-and-column computation each.
__device__ __forceinline__ int tile_neighbour(u32 i, int d) { return (int)i + dir_dy(d) * TW + dir_dx(d); }
__device__ __forceinline__ int halo_neighbour(int hi, int d) { return hi + dir_dy(d) * HW + dir_dx(d); }

