// Exact push-relabel max-flow on 2D grids (4- or 8-connected), CUDA Cuts style, tiled.
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

// ---------------------------------------------------------------------------------
// Grid barrier for the persistent kernel (all blocks co-resident: cooperative launch).
// The last block to arrive copies the counters into Ctl::snap before releasing.
// Returns false when it waited too long (the solve is then abandoned with ST_HANG).

#ifndef LIVECUT_EMU
// Whether a wait that began at `start` has gone on too long (~20 s: something is broken);
// if so the solve is marked hung.
__device__ __forceinline__ bool waited_too_long(Ctl* c, long long start) {
    if (clock64() - start <= 40000000000LL) return false;
    atomicExch(&c->status, ST_HANG);
    return true;
}

// Nanoseconds of the device's global timer (the same clock on every SM).
__device__ __forceinline__ u64 now_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The flow-rate rule's bookkeeping at a grid barrier (`rule`, the same in every block):
// RULE_START as a global relabel begins, RULE_MARK as it ends, RULE_DECIDE as a discharge
// round by phases ends: another round is wanted (Snap::more) while tiles are active or
// mailed, the local relabels since the global one stay under its work cap, and the last
// round sent flow to t at a rate of at least gr_rate_pct % of the rate since the global
// relabel began (its cost included): the marginal rate against the cycle's average, at
// which a renewal process's long-run rate is best. The first two tests repeat the round
// loop's own: without them the kernel was slower from code placement alone
// (kernels/NOTES.md, relabel_rate_rounds).
#define RULE_START 1u
#define RULE_MARK 2u
#define RULE_DECIDE 3u
// Called by the last block at the barrier; returns whether another round is wanted.
__device__ __forceinline__ u32 rate_rule(const Params* p, Ctl* c, u32 rule) {
    volatile Ctl* vc = c;
    const u64 t = now_ns(), f = vc->sink_flow;
    bool more = false;
    if (rule == RULE_DECIDE && (vc->active_tiles || vc->mail_tiles) &&
        vc->relabels - vc->rate_w0 <= (u64)p->npix * p->gr_work_num / 16u) {
        const double df = (double)(f - vc->rate_f), dt = (double)(t - vc->rate_t);
        const double af = (double)(f - vc->rate_f0), at = (double)(t - vc->rate_t0);
        more = df > 0.0 && df * at * 100.0 >= (double)p->gr_rate_pct * af * dt;
    }
    if (rule == RULE_START) {
        c->rate_t0 = t;
        c->rate_f0 = f;
    }
    if (rule == RULE_MARK) c->rate_w0 = vc->relabels;
    c->rate_t = t;
    c->rate_f = f;
    return more;
}

// `next` (the same in every block): 0 keeps the work queue as it is; NEXT_PASS empties
// it for a new pass (new stamp, one token per block); NEXT_GR also starts a new global
// relabel epoch. The last block to arrive does this while every other block waits.
// A block arrives with one acquire-release atomic and takes the barrier's number from the
// count it returns (every block arrives at every barrier), with no load of the
// generation and fence first; the last block reads the counters it copies once and
// releases with no fence of its own, and a waiter reads the copy right after its
// acquiring poll: a round trip less each. Other forms tried: kernels/NOTES.md, grid_sync.
#define NEXT_PASS 1u
#define NEXT_GR 2u
__device__ bool grid_sync(Ctl* c, u32 nblocks, Snap* s_snap, u32* s_ok, u32 next = 0,
                          const Params* rp = nullptr, u32 rule = 0) {
    __syncthreads();
    if (threadIdx.x == 0) {
        PROFILE(const u64 b0 = clock64();)
        u32 ok = 1;
        const u32 arrived = atom_add_acq_rel(&c->bar_count, 1u);
        const u32 gen = arrived / nblocks;  // barriers completed before this one
        if (arrived % nblocks == nblocks - 1) {
            // far from 2^32 the count starts again, as bar_gen does: no block arrives
            // at the next barrier before this one's release
            const bool restart = arrived >= 0x80000000u;
            volatile Ctl* vc = c;
            const u64 relabels = vc->relabels;
            const u32 active = vc->active_tiles, mail = vc->mail_tiles;
            u32 stamp = vc->stamp, epoch = vc->gr_epoch;
            c->snap.more = rule ? rate_rule(rp, c, rule) : 0u;
            c->snap.late = rp && rp->budget_ns != NO_BUDGET && now_ns() >= vc->deadline_ns;
            if (next) {
                c->q_head = 0;
                c->q_tail = 0;
                c->q_pending = nblocks;
                c->stamp = ++stamp;
                if (next == NEXT_GR) c->gr_epoch = ++epoch;
            }
            c->snap.relabels = relabels;
            c->snap.active_tiles = active;
            c->snap.mail_tiles = mail;
            c->snap.stamp = stamp;
            c->snap.gr_epoch = epoch;
            if (restart) c->bar_count = 0;
            st_release(&c->bar_gen, restart ? 0u : gen + 1);
        } else {
            const long long start = clock64();
            while (ld_acquire(&c->bar_gen) == gen) {
                __nanosleep(20);
                if (waited_too_long(c, start)) {
                    ok = 0;
                    break;
                }
            }
        }
        volatile Snap* vs = &c->snap;
        s_snap->relabels = vs->relabels;
        s_snap->active_tiles = vs->active_tiles;
        s_snap->mail_tiles = vs->mail_tiles;
        s_snap->stamp = vs->stamp;
        s_snap->gr_epoch = vs->gr_epoch;
        s_snap->more = vs->more;
        s_snap->late = vs->late;
        if (ld_acquire(&c->status) == ST_HANG) ok = 0;
        *s_ok = ok;
        PROFILE(atomicAdd(&c->barrier_cycles, (u64)(clock64() - b0));)
    }
    __syncthreads();
    return *s_ok != 0;
}
#endif

// ---------------------------------------------------------------------------------
// Global relabel of the persistent solve, first way (grids of many tiles per block): a
// work queue of the tiles that still have to relax, in a ring of qcap slots, that any
// block takes from. Every tile has a state word (tile_q[t]: stamp of its pass << 2 | state; a
// word of another pass reads as IDLE) so that it is queued at most once and worked on by
// one block at a time: a tile that is pushed while a block works on it is queued again
// when that block is done. q_pending counts the tiles queued or being worked on plus one
// token per block, which a block returns once it has queued its share of the pass's
// first tiles: the pass is over when it reaches 0.

#define Q_NONE 0xffffffffu
#define TQ_IDLE 0u
#define TQ_QUEUED 1u
#define TQ_BUSY 2u
#define TQ_AGAIN 3u  // busy, and pushed meanwhile

#ifndef LIVECUT_EMU
__device__ __forceinline__ void q_enqueue(const Params& p, u32 t) {
    atomicAdd(&p.ctl->q_pending, 1u);
    const u32 slot = atomicAdd(&p.ctl->q_tail, 1u) & (p.qcap - 1u);
    st_release(&p.queue[slot], t + 1u);
}

// Queues tile t for the pass `stamp` unless it is queued already (any thread).
__device__ void q_push(const Params& p, u32 t, u32 stamp) {
    u32 old = ld_relaxed(&p.tile_q[t]);
    for (;;) {
        const u32 st = (old >> 2) == stamp ? (old & 3u) : TQ_IDLE;
        if (st == TQ_QUEUED || st == TQ_AGAIN) return;
        const u32 want = (stamp << 2) | (st == TQ_IDLE ? TQ_QUEUED : TQ_AGAIN);
        const u32 seen = atomicCAS(&p.tile_q[t], old, want);
        if (seen == old) {
            if (st == TQ_IDLE) q_enqueue(p, t);
            return;
        }
        old = seen;
    }
}

// Claims tile t for the calling block without the queue (thread 0): true when it was
// idle in the pass `stamp` and is now busy (counted in q_pending like a queued tile);
// false when it is queued or busy already.
__device__ u32 q_take(const Params& p, u32 t, u32 stamp) {
    atomicAdd(&p.ctl->q_pending, 1u);
    const u32 old = ld_relaxed(&p.tile_q[t]);
    if ((old >> 2) != stamp || (old & 3u) == TQ_IDLE) {
        if (atomicCAS(&p.tile_q[t], old, (stamp << 2) | TQ_BUSY) == old) {
            __threadfence();
            return 1u;
        }
    }
    atomicSub(&p.ctl->q_pending, 1u);
    return 0u;
}

// Takes the next tile of the pass (all threads of the block call it): its id, or Q_NONE
// once the pass is over (or the solve hangs). A block takes a ticket (the next slot, even
// if nothing is there yet) and waits until the slot is filled or the pass is over; no
// compare-and-swap loop, so blocks never fight over the queue's head.
__device__ u32 q_pop(const Params& p, u32 stamp, u32* s_item) {
    __syncthreads();
    if (threadIdx.x == 0) {
        Ctl* c = p.ctl;
        u32 item = Q_NONE;
        u32* slot = &p.queue[atomicAdd(&c->q_head, 1u) & (p.qcap - 1u)];
        const long long start = clock64();
        for (;;) {
            const u32 v = ld_acquire(slot);
            if (v) {
                st_relaxed(slot, 0u);
                item = v - 1u;
                atomicExch(&p.tile_q[item], (stamp << 2) | TQ_BUSY);
                __threadfence();
                break;
            }
            // nothing can be pushed once q_pending is 0: the ticket stays unfilled
            if (ld_acquire(&c->q_pending) == 0u) break;
            __nanosleep(32);
            if (waited_too_long(c, start)) break;
        }
        *s_item = item;
    }
    __syncthreads();
    return *s_item;
}

// The block is done with tile t (thread 0, after the block's writes are fenced): the tile
// goes back to IDLE, or is queued again when it was pushed meanwhile. Then returns the
// tile's share of q_pending.
__device__ void q_done(const Params& p, u32 t, u32 stamp) {
    const u32 busy = (stamp << 2) | TQ_BUSY;
    if (atomicCAS(&p.tile_q[t], busy, stamp << 2) != busy) {
        atomicExch(&p.tile_q[t], (stamp << 2) | TQ_QUEUED);
        q_enqueue(p, t);
    }
    atomicSub(&p.ctl->q_pending, 1u);
}
#endif

// Second way (Params::gr_owners, grids of few tiles per block): wake-ups. Block b owns
// tiles b, b + nblocks, ...: it relaxes each once from scratch, then relaxes again
// whichever of them a neighbour woke. A wake is a count: tile_q[t] counts the wakes tile t ever got,
// tile_q[ntiles + t] those its owner has taken, so a wake is one fire-and-forget
// increment after the waker's fence and an owner sees it with one acquire load (no
// queue slot, compare-and-swap or claim on the chain from one relaxation to the next).
// Ctl::q_pending counts one token per block still on its first relaxations plus the
// wakes not yet relaxed: a waker adds its wakes before its fence, the owner subtracts
// them after relaxing, so the pass is over when it reads 0.

#ifndef LIVECUT_EMU
// Returns the block's token once it has done the first relaxation of its tiles (both
// ways; the queue's first relaxations may be taken by others).
__device__ __forceinline__ void q_token(const Params& p) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicSub(&p.ctl->q_pending, 1u);
    }
}

// Waits until a tile the block owns was woken (all threads call it): its id, with the
// number of wakes taken in *s_taken, or Q_NONE once the pass is over (or the solve
// hangs). Warp 0 polls 32 tiles at once.
__device__ u32 wait_woken_tile(const Params& p, u32* s_item, u32* s_taken) {
    __syncthreads();
    if (threadIdx.x < 32u) {
        Ctl* c = p.ctl;
        const u32 nb = p.nblocks;
        const long long start = clock64();
        u32 item = Q_NONE, count = 0, got = 0;
        for (;;) {
            for (u32 t0 = blockIdx.x; t0 < p.ntiles; t0 += 32u * nb) {
                const u32 t = t0 + threadIdx.x * nb;
                u32 cnt = 0, seen = 0;
                if (t < p.ntiles) {
                    cnt = ld_acquire(&p.tile_q[t]);
                    seen = p.tile_q[p.ntiles + t];
                }
                const u32 w = __ballot_sync(0xffffffffu, cnt != seen);
                if (w) {
                    const u32 lane = (u32)__ffs(w) - 1u;
                    item = t0 + lane * nb;
                    count = __shfl_sync(0xffffffffu, cnt - seen, lane);
                    got = __shfl_sync(0xffffffffu, cnt, lane);
                    break;
                }
            }
            if (item != Q_NONE) break;
            u32 over = 0;
            if (threadIdx.x == 0) {
                over = ld_acquire(&c->q_pending) == 0u || waited_too_long(c, start);
            }
            if (__shfl_sync(0xffffffffu, over, 0)) break;
            // no sleep between polls: the poll is on the relabel's critical path, and a
            // sleep here and in wait_edge_neighbours was slower (kernels/NOTES.md,
            // wait_woken_tile)
        }
        if (threadIdx.x == 0) {
            // the wakes taken are all the tile had got: a store, not a load and a
            // store, on the chain from one relaxation to the next
            if (item != Q_NONE) p.tile_q[p.ntiles + item] = got;
            *s_item = item;
            *s_taken = count;
        }
    }
    __syncthreads();
    return *s_item;
}
#endif

// ---------------------------------------------------------------------------------
// Shared memory of one tile, and the per-pixel state each thread keeps in registers.
//
// A pixel's own excess, t-link residual, height and arc residuals live in registers of
// the thread that owns it (px[k] for pixel threadIdx.x + k * BDIM; PPT = 1 on the GPU, so
// these are plain registers); shared memory only holds what neighbours read: heights (with
// the halo), the flow pushed this step and the bits saying from where flow arrived.

#define FWORDS (TP / 32)  // frontier bitset words (one per tile row)
#define PPT (TP / BDIM)   // pixels per thread

// Frontier of a tile BFS: values and row bitsets, double buffered by iteration.
struct Frontier {
    u32 v[2][TP];
    u32 w[2][FWORDS];
};

template <int D>
struct Px {
    u64 e;       // excess
    u32 tres;    // residual to t
    u32 h;       // height
    u32 res[D];  // residual of each arc
    u32 mark;    // height buffers still to write after a relabel (2, 1, 0)
};

// Per-pixel arrival flags: byte d set when the neighbour in direction d pushed to the
// pixel this step (plain byte stores, one writer per byte; read as one word).
template <int D> struct Inb { typedef u32 T; };
template <> struct Inb<8> { typedef u64 T; };

// Tile BFS by one warp on bit rows (bit_bfs), in the square tiles' module only: its
// relaxations and region relabels take every one of 32 warps and a block barrier per
// Jacobi iteration, where one warp's level is a few shifts, two shuffles and a vote. The
// region relabels of the discharge visits take it on 4C only: on 8C the code spills in
// the steps (see region_relabel). Not in the half-height tiles' module, whose shorter
// relaxations it made slower, nor other forms of the warp's loop: kernels/NOTES.md,
// bit_bfs.
#ifndef LIVECUT_EMU
#define BIT_BFS (TH == 32)
#else
#define BIT_BFS 0
#endif
#define BB_PLANES 8  // level planes: seeds within 127 levels, levels within 255 of the lowest
// Inputs and result of bit_bfs: row words of the arcs and t-links, the border pixels'
// seed heights, and the visited pixels with their level above lmin in bit planes.
struct BitBfs {
    u32 arow[8][32];   // bit x of arow[d][y]: pixel (x, y) has a residual arc in direction d
    u32 trow[32];      // ... a t-link residual (seed at height 1)
    u32 sl[32], sr[32], st[32], sb[32];  // seeds of columns 0 / TW-1 by row, rows 0 / TH-1 by column
    u32 plane[BB_PLANES + 1][32];        // level bits by plane, then the visited pixels
    u32 lmin, ok, levels;
};

template <int D>
struct TileSmem {
    u32 h[2][HP];          // heights with halo, double buffered (Jacobi relabels)
    u32 out[D][TP];        // flow pushed to in-tile neighbours this step
    typename Inb<D>::T inb[TP];  // directions from which flow arrived this step (byte d)
    u32 bout[D][PSLOTS];   // flow pushed across the border this visit, by mailbox slot
    Frontier f;            // region relabel
#if BIT_BFS
    BitBfs bb;             // ... by one warp (bit_bfs)
#endif
    u64 sink;              // flow pushed to t during the visit
    u32 relabels;
    u32 mail;              // mail taken at load
    u32 flag;              // the tile's active flag as loaded
    u32 item;              // work queue item taken by the block
    u32 mailto;            // neighbour tiles mailed at store (bit per 3x3 offset)
};

struct BfsSmem {
    u64 gh[NHALO];     // the halo pixels' gh words (persistent solve), for lowered_wakes
    u32 h[HP];
    Frontier f;
#if BIT_BFS
    BitBfs bb;
#endif
    u32 mail;
    u32 border;
    u32 item;          // tile woken for the block
    u32 taken;         // ... and the wakes taken with it
    u32 wakes[9];      // wakes of the relaxation for each tile of the 3x3 neighbourhood
};

// ---------------------------------------------------------------------------------
// Initialisation: fold terminal arcs, build the blocked residual arrays.

// Clears tile t's flags and its share of the work queue, as a solve starts with them.
__device__ void reset_tile(const Params& p, u32 t) {
    for (u32 k = t * BDIM + threadIdx.x; k < p.qcap; k += p.ntiles * BDIM) p.queue[k] = 0;
    if (threadIdx.x == 0) {
        p.tile_q[t] = 0;
        p.tile_q[p.ntiles + t] = 0;
        p.tile_active[t] = 0;
        p.tile_mail[t] = 0;
        p.activity[t] = 0;
        p.tile_dirty[t] = 0;
        p.tile_dirty[p.ntiles + t] = 0;
        p.tile_round[t] = 0;
        p.tile_calm[t] = 0;
    }
}

template <int D>
__device__ void init_tile(const Params& p, u32 t, u64* s_folded) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    const u32 wh = p.width * p.height;
    u64 folded = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const u32 gx = tx * TW + i % TW, gy = ty * TH + i / TW;
        const bool real = gx < p.width && gy < p.height;
        const u32 q = gy * p.width + gx;
        u32 s = 0, k = 0;
        if (real) {
            s = (u32)p.in_src[q];
            k = (u32)p.in_sink[q];
        }
        const u32 m = umin32(s, k);
        folded += m;
        p.exc[base + i] = s - m;
        p.tres[base + i] = k - m;
        p.off[base + i] = 0;
        p.h[base + i] = 0;
        p.gh[base + i] = 0;
        for (int d = 0; d < D; ++d) p.res[(size_t)d * p.npix + base + i] = real ? (u32)p.in_edges[(size_t)d * wh + q] : 0u;
    }
    for (u32 k = threadIdx.x; k < (u32)D * PSLOTS; k += BDIM) p.pend[t * D * PSLOTS + k] = 0;
    if (folded) atomicAdd(s_folded, folded);
    reset_tile(p, t);
}

// ---------------------------------------------------------------------------------
// Tile BFS: h(i) = min(h(i), h(j) + 1 over arcs i -> j inside the tile), from sources
// whose heights were already lowered and whose bits are set in f.w[0] (their values in
// f.v[0]). Each iteration, pixels next to the frontier pull from it (own arcs, bit d of
// arcs[k]), so no atomics; those that improved form the next frontier, written as row
// words by ballot. Pixels away from the frontier cost three shared loads. Same fixpoint
// as Bellman-Ford. Heights are read and written in `h` (shared, with halo).
// Other forms measured and not kept: kernels/NOTES.md, frontier_fixpoint.
template <int D>
__device__ u32 frontier_fixpoint(u32* h, Frontier& f, const u32* arcs) {
    u32 iters = 0;
    for (u32 cur = 0;; cur ^= 1u) {
        u32 improved = 0;
#pragma unroll
        for (u32 k = 0; k < PPT; ++k) {
            const u32 i = threadIdx.x + k * BDIM;
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            const u32 ws = f.w[cur][ly];
            const u32 wa = ly > 0 ? f.w[cur][ly - 1] : 0u;
            const u32 wb = ly < TH - 1 ? f.w[cur][ly + 1] : 0u;
            const u32 side = (lx > 0 ? 1u << (lx - 1) : 0u) | (lx < TW - 1 ? 1u << (lx + 1) : 0u);
            const u32 near = D == 8 ? ((wa | wb) & (side | 1u << lx)) | (ws & side) : ((wa | wb) & (1u << lx)) | (ws & side);
            u32 bit = 0;
            if (near) {
                const int hi = (ly + 1) * HW + lx + 1;
                const u32 v = h[hi];
                u32 m = v;
#pragma unroll
                for (int d = 0; d < D; ++d) {
                    const int nx = lx + dir_dx(d);
                    // the frontier row words are in registers already (0 off the tile)
                    const u32 row = dir_dy(d) < 0 ? wa : dir_dy(d) > 0 ? wb : ws;
                    if (nx < 0 || nx >= TW || !((arcs[k] >> d) & 1u) || !((row >> nx) & 1u)) continue;
                    m = umin32(m, f.v[cur][tile_neighbour(i, d)] + 1u);
                }
                if (m < v) {
                    h[hi] = m;
                    f.v[cur ^ 1][i] = m;
                    bit = 1;
                }
            }
            row_word_store(f.w[cur ^ 1], i, bit);
            improved |= bit;
        }
        ++iters;
        if (!__syncthreads_or(improved)) return iters;
    }
}

#ifndef LIVECUT_EMU
// Stores pixel (lx, ly)'s part of bit_bfs's inputs: its row's arc and t-link words (a
// ballot each) and, on the border, its seed (the t-link's 1 or a halo height + 1). Every
// lane of every warp calls it (PPT = 1: a warp is a tile row).
template <int D>
__device__ __forceinline__ void bit_bfs_inputs(BitBfs& b, int lx, int ly, u32 bits, u32 seed) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
        const u32 w = __ballot_sync(0xffffffffu, (bits >> d) & 1u);
        if (lx == 0) b.arow[d][ly] = w;
    }
    const u32 tw = __ballot_sync(0xffffffffu, (bits & BIT_SINK) != 0u);
    if (lx == 0) {
        b.trow[ly] = tw;
        b.sl[ly] = seed;
    }
    if (lx == TW - 1) b.sr[ly] = seed;
    if (ly == 0) b.st[lx] = seed;
    if (ly == TH - 1) b.sb[lx] = seed;
}

// Tile BFS by one warp on bit rows: lane y holds row y's words, a level is a few shifts,
// two shuffles and a vote (the Jacobi iterations above take every warp and a block
// barrier each). Multi-source: the t-link pixels at height 1 and the border pixels at
// their halo heights + 1 (`bit_bfs_inputs`), each entering the front at its level, so the
// heights are the same fixpoint as frontier_fixpoint's from those seeds. Levels are
// recorded in bit planes relative to the lowest seed; where the seeds or the levels span
// more than the planes hold, ok = 0 and the caller runs the Jacobi iterations instead.
template <int D>
__device__ void bit_bfs(BitBfs& b) {
    const u32 full = 0xffffffffu;
    const u32 lane = threadIdx.x;
    const bool row = lane < (u32)TH;
    u32 a[D];
#pragma unroll
    for (int d = 0; d < D; ++d) a[d] = row ? b.arow[d][lane] : 0u;
    const u32 tw = row ? b.trow[lane] : 0u;
    // seeds at INF or above (INF + 1 from an INF halo) are none
    auto seed = [](u32 v) { return v < INF ? v : INF; };
    const u32 sl = row ? seed(b.sl[lane]) : INF, sr = row ? seed(b.sr[lane]) : INF;
    const u32 st = seed(b.st[lane]), sb = seed(b.sb[lane]);
    const u32 tl = tw ? 1u : INF;
    const u32 lo = umin32(umin32(umin32(sl, sr), umin32(st, sb)), tl);
    auto fin = [](u32 v) { return v < INF ? v : 0u; };
    const u32 hi = max(max(max(fin(sl), fin(sr)), max(fin(st), fin(sb))), fin(tl));
    const u32 lmin = __reduce_min_sync(full, lo);
    const u32 lmax = __reduce_max_sync(full, hi);
    u32 ok = 1, levels = 0, vis = 0;
    u32 pl[BB_PLANES];
#pragma unroll
    for (int q = 0; q < BB_PLANES; ++q) pl[q] = 0;
    if (lmin < INF && lmax - lmin >= (1u << (BB_PLANES - 1))) ok = 0;
    if (lmin < INF && ok) {
        u32 front = 0, lev = lmin;
        for (;;) {
            const u32 top = __ballot_sync(full, st == lev), bot = __ballot_sync(full, sb == lev);
            u32 n = (sl == lev ? 1u : 0u) | (sr == lev ? 1u << (TW - 1) : 0u) | (lev == 1u ? tw : 0u);
            if (lane == 0) n |= top;
            if (lane == (u32)TH - 1u) n |= bot;
            u32 below = __shfl_down_sync(full, front, 1), above = __shfl_up_sync(full, front, 1);
            if (lane == 31u) below = 0;
            if (lane == 0) above = 0;
            // pixel x of row y reaches the front through its arc d to the front's pixel
            n |= ((front >> 1) & a[0]) | ((front << 1) & a[1]) | (below & a[2]) | (above & a[3]);
            if (D == 8)
                n |= ((below >> 1) & a[4 % D]) | ((above << 1) & a[5 % D]) | ((below << 1) & a[6 % D]) |
                     ((above >> 1) & a[7 % D]);
            n &= ~vis;
            vis |= n;
            const u32 l = lev - lmin;
#pragma unroll
            for (int q = 0; q < BB_PLANES; ++q)
                if ((l >> q) & 1u) pl[q] |= n;
            front = n;
            ++levels;
            if (__any_sync(full, n != 0u)) {
                ++lev;
            } else {
                if (lev >= lmax) break;
                // the front died out: on to the next seed above this level
                u32 c = INF;
                if (sl > lev) c = umin32(c, sl);
                if (sr > lev) c = umin32(c, sr);
                if (st > lev) c = umin32(c, st);
                if (sb > lev) c = umin32(c, sb);
                if (tl > lev) c = umin32(c, tl);
                lev = __reduce_min_sync(full, c);
                if (lev >= INF) break;
            }
            if (lev - lmin >= (1u << BB_PLANES)) {
                ok = 0;
                break;
            }
        }
    }
    if (row) {
#pragma unroll
        for (int q = 0; q < BB_PLANES; ++q) b.plane[q][lane] = pl[q];
        b.plane[BB_PLANES][lane] = vis;
    }
    if (lane == 0) {
        b.ok = ok;
        b.lmin = lmin;
        b.levels = levels;
    }
}

// Runs bit_bfs by warp 0 on the inputs every warp stored (a barrier before, all threads
// call it); whether its heights are there to read (else the Jacobi iterations must run).
template <int D>
__device__ __forceinline__ bool bit_bfs_block(BitBfs& b) {
    if (threadIdx.x < 32u) bit_bfs<D>(b);
    __syncthreads();
    return b.ok != 0u;
}

// Height of pixel i from bit_bfs's planes (INF where no seed reaches it).
__device__ __forceinline__ u32 bit_bfs_height(const BitBfs& b, u32 i) {
    const u32 x = i % TW, y = i / TW;
    if (!((b.plane[BB_PLANES][y] >> x) & 1u)) return INF;
    u32 l = 0;
#pragma unroll
    for (int q = 0; q < BB_PLANES; ++q) l |= ((b.plane[q][y] >> x) & 1u) << q;
    return b.lmin + l;
}
#endif

// Starts a frontier: pixel i is a source with height h (when `source`).
__device__ __forceinline__ void frontier_seed(Frontier& f, u32 i, u32 source, u32 h) {
    if (source) f.v[0][i] = h;
    row_word_store(f.w[0], i, source);
}

// ---------------------------------------------------------------------------------
// Global relabel: exact BFS distances to t over residual arcs, by tile fixpoints.

// Bits of the 3x3 tile neighbourhood (bit oy * 3 + ox, centre = 4) that pixel (lx, ly)
// of a tile touches through its arcs leaving the tile.
template <int D>
__device__ __forceinline__ u32 outside_bits(int lx, int ly) {
    u32 b = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
        const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
        const int ox = nx < 0 ? 0 : nx >= TW ? 2 : 1, oy = ny < 0 ? 0 : ny >= TH ? 2 : 1;
        if (ox != 1 || oy != 1) b |= 1u << (oy * 3 + ox);
    }
    return b;
}

// What the persistent solve's global relabel `epoch` tells neighbour tiles about a pixel,
// in one word: the relabel (16 bits), the residual bits and the height. One load then
// gives a neighbour the height and whether it is of this relabel, with no acquire of the
// tile's epoch first: one round trip to L2 instead of two on the relabel's critical path,
// and the tile's epoch needs no fence and release before neighbours are queued
// (kernels/NOTES.md, gh_pack). Every relabel rewrites every pixel, so a stored epoch is
// the current one or an earlier one, which differs even modulo 2^16.
__device__ __forceinline__ u64 gh_pack(u32 epoch, u32 bits, u32 h) {
    return (u64)(epoch & 0xffffu) << 48 | (u64)(bits & 0xffffu) << 32 | h;
}
__device__ __forceinline__ bool gh_current(u64 g, u32 epoch) { return (u32)(g >> 48) == (epoch & 0xffffu); }

// gh word of halo pixel (lx, ly) of tile (tx, ty) (0, of no relabel, off the padded grid),
// and the height a BFS of global relabel `epoch` takes from it: INF where the pixel has
// no height of this relabel yet. With epoch 0 (the host-driven scheme) the height is
// the stored one, unchecked.
__device__ __forceinline__ u32 bfs_halo(const Params& p, u32 tx, u32 ty, int lx, int ly, u32 epoch, u64* word) {
    *word = 0;
    const int gx = (int)(tx * TW) + lx;
    const int gy = (int)(ty * TH) + ly;
    if (gx < 0 || gy < 0 || gx >= (int)(p.tiles_x * TW) || gy >= (int)(p.tiles_y * TH)) return INF;
    const u32 j = blocked_index(p, (u32)gx, (u32)gy);
    if (epoch) {
        const u64 g = ld_relaxed(&p.gh[j]);
        *word = g;
        return gh_current(g, epoch) ? (u32)g : INF;
    }
    return ld_relaxed(&p.h[j]);
}

#ifndef LIVECUT_EMU
__device__ void q_push(const Params& p, u32 t, u32 stamp);
#endif

// After border pixel i of a tile got the lower height v in the global relabel `epoch`,
// the 3x3 bits of the neighbour tiles that must relax again: those whose pixel across
// the arc had no height of this relabel yet (the tile may be reading the old ones right
// now), and those whose pixel's residual arc into i would now give it a lower height.
// The neighbours' gh words are the ones the relaxation loaded for its halo (`halo`): a
// pixel with a height of this relabel only gets lower ones, however stale the halo it
// was computed from, so a stale word only asks for more wakes, never fewer; loading the
// words again here would put a round trip on the relabel's critical path.
template <int D>
__device__ u32 lowered_wakes(const Params& p, u32 tx, u32 ty, const u64* halo, u32 i, u32 v, u32 epoch) {
    const int lx = (int)(i % TW), ly = (int)(i / TW);
    u32 wake = 0;
    for (int d = 0; d < D; ++d) {
        const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
        if (inside_tile(nx, ny)) continue;
        const int gx = (int)(tx * TW) + nx, gy = (int)(ty * TH) + ny;
        if (gx < 0 || gy < 0 || gx >= (int)(p.tiles_x * TW) || gy >= (int)(p.tiles_y * TH)) continue;
        const u32 bit = 1u << ((ny < 0 ? 0 : ny >= TH ? 6 : 3) + (nx < 0 ? 0 : nx >= TW ? 2 : 1));
        if (wake & bit) continue;
        const u64 g = halo[halo_slot(nx, ny)];
        const u32 arc = (u32)(g >> (32 + (d ^ 1))) & 1u;
        if (!gh_current(g, epoch) || (arc && (u32)g > v + 1u)) wake |= bit;
    }
    return wake;
}

// One BFS relaxation of tile t. The initial one of a global relabel takes the tile's mail
// into its residual graph, builds the residual bits and starts from h = 1 at pixels with a
// t-link residual (INF elsewhere); later ones continue from the stored heights. Both lower
// border pixels from the halo (heights of this relabel only, see bfs_halo) and
// relax the tile to its fixpoint. Sets the tile's active flag and returns the 3x3 bits of
// the neighbour tiles that may see a lower border height (initial: a finite one); in a
// global relabel `epoch` of the persistent solve, wakes those that must relax again.
// With CAP, a relabel capped at `cap` (relabel_cap; INF: whole).
// Other orders of its loads, and residual bits kept by the visits, measured and not
// kept: kernels/NOTES.md, gr_tile.
template <int D, bool CAP = false>
__device__ u32 gr_tile(const Params& p, BfsSmem& s, u32 t, bool initial, u32 epoch, u32 stamp, u64* iters, u32 cap) {
    if (!CAP) cap = INF;
    PROFILE(const u64 c0 = cycles();)
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    u32 bits[PPT], h0[PPT], fin[PPT];
    // Thread 0 keeps the tile's flag in a register (only it reads the flag) and takes the
    // mail, while the last threads load the halo: its loads and atomics are not a round
    // trip or more in front of a halo load (a relaxation is a chain of round trips).
    // Loading the tile's own heights and residual bits before the halo, so that their
    // round trip overlaps the halo's, was no faster (kernels/NOTES.md, gr_tile).
    u32 flag = 0;
    if (threadIdx.x == 0) {
        flag = p.tile_active[t];
        s.mail = initial ? take_mail(p, t) : 0u;
        s.border = 0;
        if (s.mail) __threadfence();
    }
    if (threadIdx.x < 9u) s.wakes[threadIdx.x] = 0;
    for (u32 k = BDIM - 1u - threadIdx.x; k < NHALO; k += BDIM) {
        int lx, ly;
        halo_coord(k, lx, ly);
        // the host-driven scheme's initial pass runs every tile at once: no halo yet
        u64 word = 0;
        s.h[(ly + 1) * HW + lx + 1] = (initial && !epoch) ? INF : bfs_halo(p, tx, ty, lx, ly, epoch, &word);
        s.gh[k] = word;
    }
    __syncthreads();
    const u32 mail = s.mail;
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const u32 i = threadIdx.x + k * BDIM;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        if (initial) {
            u64 e = p.exc[base + i];
            u32 b = p.tres[base + i] ? BIT_SINK : 0u;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                u32 r = p.res[(size_t)d * p.npix + base + i];
                if (mail && !inside_tile(lx + dir_dx(d), ly + dir_dy(d))) {
                    const u32 f = take_pending<D>(p, tx, ty, lx, ly, d);
                    if (f) {
                        r += f;
                        e += f;
                        p.res[(size_t)d * p.npix + base + i] = r;
                        p.exc[base + i] = e;
                    }
                }
                if (r) b |= 1u << d;
            }
            if (e) b |= BIT_EXCESS;
            p.rmask[base + i] = (u16)b;
            bits[k] = b;
            h0[k] = INF;
            // a height is INF only where t is out of reach for good (relabel_cap)
            fin[k] = CAP && cap < INF && p.h[base + i] < INF;
        } else {
            h0[k] = p.h[base + i];
            bits[k] = p.rmask[base + i];
            fin[k] = 0;
        }
        const int hi = (ly + 1) * HW + lx + 1;
        u32 m = initial ? ((bits[k] & BIT_SINK) ? 1u : INF) : h0[k];
#if BIT_BFS
        u32 seed = (bits[k] & BIT_SINK) ? 1u : INF;  // bit_bfs starts from the seeds alone
#endif
        if (on_border(i))
            for (int d = 0; d < D; ++d)
                if (!inside_tile(lx + dir_dx(d), ly + dir_dy(d)) && ((bits[k] >> d) & 1u)) {
                    const u32 v = s.h[halo_neighbour(hi, d)] + 1u;
                    if (CAP && v >= cap) continue;  // a halo pixel at the cap: no source
                    m = umin32(m, v);
#if BIT_BFS
                    seed = umin32(seed, v);
#endif
                }
        // a capped relabel's pixels that could reach t start at the cap, not as sources:
        // the Jacobi iterations lower them only below it
        s.h[hi] = CAP && fin[k] ? umin32(m, cap) : m;
        frontier_seed(s.f, i, m < h0[k], m);
#if BIT_BFS
        bit_bfs_inputs<D>(s.bb, lx, ly, bits[k], seed);
#endif
    }
    __syncthreads();
#if BIT_BFS
    // from the seeds alone: a later relaxation's halo is no higher than the one its
    // stored heights came from, so the minimum of both is the fixpoint from those
    if (bit_bfs_block<D>(s.bb)) {
#pragma unroll
        for (u32 k = 0; k < PPT; ++k) {
            const u32 i = threadIdx.x + k * BDIM;
            const u32 v = bit_bfs_height(s.bb, i);
            s.h[halo_index(i)] = initial ? v : umin32(v, h0[k]);
        }
        *iters += s.bb.levels;
    } else
#endif
    *iters += frontier_fixpoint<D>(s.h, s.f, bits);
    u32 border = 0, active = 0;
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const u32 i = threadIdx.x + k * BDIM;
        u32 v = s.h[halo_index(i)];
        if (CAP && fin[k] && v > cap) {
            v = cap;  // not reached below the cap (bit_bfs does not stop there): at least that far
            s.h[halo_index(i)] = v;
        }
        if (CALM(D) && initial && (bits[k] & BIT_SINK)) border |= 1u << 16;  // for tile_calm
        if (v != h0[k] || initial) {
            st_relaxed(&p.h[base + i], v);
            if (epoch) st_relaxed(&p.gh[base + i], gh_pack(epoch, bits[k], v));
            if (v != h0[k] && on_border(i)) border |= outside_bits<D>((int)(i % TW), (int)(i / TW));
        }
        if ((bits[k] & BIT_EXCESS) && v < INF) active = 1;
    }
#ifndef LIVECUT_EMU
    // The neighbour tiles to wake, counted in shared memory (s.wakes[b]: the neighbour at
    // 3x3 bit b). Warp 0 sends them after the block's barrier: owners' wakes go into
    // q_pending first, then the fence of the lanes that wake makes the block's heights
    // visible (the barrier orders every thread's stores before it, as in grid_sync), then
    // the wakes: one fence by the lanes that wake, none where no neighbour is woken,
    // instead of one by every thread before the barrier (kernels/NOTES.md, gr_tile).
    if (epoch) {
        u32 wake = 0;
#pragma unroll
        for (u32 k = 0; k < PPT; ++k) {
            const u32 i = threadIdx.x + k * BDIM;
            const u32 v = s.h[halo_index(i)];
            if (v != h0[k] && on_border(i)) wake |= lowered_wakes<D>(p, tx, ty, s.gh, i, v, epoch);
        }
        // only the bits some lane of the warp wants (most warps hold none), not a ballot
        // for each of the 9 (kernels/NOTES.md, gr_tile)
        for (u32 any = __reduce_or_sync(0xffffffffu, wake); any; any &= any - 1u) {
            const u32 b = (u32)__ffs(any) - 1u;
            const u32 n = (u32)__popc(__ballot_sync(0xffffffffu, (wake >> b) & 1u));
            if (threadIdx.x % 32u == b) atomicAdd(&s.wakes[b], n);
        }
    }
#endif
    shared_or<D>(&s.border, border);
    active = __syncthreads_or(active);
#ifndef LIVECUT_EMU
    if (epoch && threadIdx.x < 32u) {
        const u32 b = threadIdx.x;
        const u32 wakes = b < 9u ? s.wakes[b] : 0u;
        if (p.gr_owners) {
            const u32 total = __reduce_add_sync(0xffffffffu, wakes);
            if (b == 0u && total) atomicAdd(&p.ctl->q_pending, total);
            __syncwarp();
        }
        if (wakes) {
            __threadfence();  // heights visible (and wakes counted) before a neighbour is woken
            const u32 nt = (ty + b / 3u - 1u) * p.tiles_x + tx + b % 3u - 1u;
            if (p.gr_owners)
                atomicAdd(&p.tile_q[nt], wakes);
            else
                q_push(p, nt, stamp);
        }
    }
#else
    (void)stamp;  // the emulation runs the host-driven scheme only
#endif
    if (threadIdx.x == 0) {
        set_tile_active(p, t, flag, active);
        atomicAdd(&p.ctl->bfs_tiles, 1u);
        PROFILE(atomicAdd(&p.ctl->cyc_bfs, cycles() - c0);)
        if (CALM(D) ? s.border & 0x1ffu : s.border) atomicAdd(&p.ctl->gr_changes, 1u);
        if (CALM(D) && initial && epoch && !p.gr_owners) p.tile_calm[t] = (s.border >> 16) ? 0u : 1u;
        // the queue's: read only by the block that takes the tile next (whether its
        // relaxation is the initial one); neighbours read the epochs in gh
        if (epoch && !p.gr_owners) st_relaxed(&p.tile_q[p.ntiles + t], epoch);
    }
    return CALM(D) ? s.border & 0x1ffu : s.border;  // without the t-link bit
}

// ---------------------------------------------------------------------------------
// Discharge: tile-local push-relabel, pixel state in registers.

template <int D>
__device__ void load_tile(const Params& p, TileSmem<D>& s, Px<D>* px, u32 t) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    // s.flag and s.mail: taken by wants_visit.
    // Other orders of its loads measured and not kept: kernels/NOTES.md, load_tile.
    if (threadIdx.x == 0) {
        s.sink = 0;
        s.relabels = 0;
        s.mailto = 0;
    }
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const u32 i = threadIdx.x + k * BDIM;
        px[k].e = p.exc[base + i];
        px[k].tres = p.tres[base + i];
        px[k].h = p.h[base + i];
#pragma unroll
        for (int d = 0; d < D; ++d) px[k].res[d] = p.res[(size_t)d * p.npix + base + i];
        px[k].mark = 0;
        s.h[0][halo_index(i)] = px[k].h;
        s.h[1][halo_index(i)] = px[k].h;
        s.inb[i] = 0;
    }
    for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
        int lx, ly;
        halo_coord(k, lx, ly);
        const u32 v = halo_height(p, tx, ty, lx, ly);
        s.h[0][(ly + 1) * HW + lx + 1] = v;
        s.h[1][(ly + 1) * HW + lx + 1] = v;
    }
    for (u32 k = threadIdx.x; k < (u32)D * PSLOTS; k += BDIM) s.bout[k / PSLOTS][k % PSLOTS] = 0;
    __syncthreads();
    if (s.mail) {
#pragma unroll
        for (u32 k = 0; k < PPT; ++k) {
            const u32 i = threadIdx.x + k * BDIM;
            if (!on_border(i)) continue;
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            for (int d = 0; d < D; ++d) {
                if (inside_tile(lx + dir_dx(d), ly + dir_dy(d))) continue;
                const u32 f = take_pending<D>(p, tx, ty, lx, ly, d);
                px[k].e += f;
                px[k].res[d] += f;
            }
        }
    }
}

// Region relabel: heights := BFS distance inside the tile to t or to a halo pixel (plus
// its halo height). Valid labels never exceed it, so heights only grow; pixels that
// reach neither become INF (they cannot reach t at all).
template <int D>
__device__ u32 region_relabel(const Params& p, TileSmem<D>& s, Px<D>* px, int cur) {
    u32* h = s.h[cur];
    u32 arcs[PPT];
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const u32 i = threadIdx.x + k * BDIM;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        u32 a = 0;
#pragma unroll
        for (int d = 0; d < D; ++d) a |= (px[k].res[d] != 0u ? 1u : 0u) << d;
        arcs[k] = a;
        u32 m = px[k].tres ? 1u : INF;
        if (on_border(i))
            for (int d = 0; d < D; ++d)
                if (!inside_tile(lx + dir_dx(d), ly + dir_dy(d)) && ((a >> d) & 1u))
                    m = umin32(m, h[halo_neighbour(hi, d)] + 1u);
        h[hi] = m;
        frontier_seed(s.f, i, m < INF, m);
#if BIT_BFS
        if (D == 4) bit_bfs_inputs<D>(s.bb, lx, ly, a | (px[k].tres ? BIT_SINK : 0u), m);
#endif
    }
    __syncthreads();
#if BIT_BFS
    // 4C only: on 8C the code alone spills more in the discharge steps
    const bool bit = D == 4 && bit_bfs_block<D>(s.bb);
    if (bit)
#pragma unroll
        for (u32 k = 0; k < PPT; ++k) h[halo_index(threadIdx.x + k * BDIM)] = bit_bfs_height(s.bb, threadIdx.x + k * BDIM);
    const u32 iters = bit ? s.bb.levels : frontier_fixpoint<D>(h, s.f, arcs);
#else
    const u32 iters = frontier_fixpoint<D>(h, s.f, arcs);
#endif
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const int hi = halo_index(threadIdx.x + k * BDIM);
        u32 v = h[hi];
        if (v >= p.hmax && v != INF) {
            v = INF;
            h[hi] = INF;
        }
        s.h[cur ^ 1][hi] = v;
        px[k].h = v;
        px[k].mark = 0;
    }
    __syncthreads();
    return iters;
}

// Push phase: every active pixel pushes min(excess, residual) along admissible arcs (to
// t at height 1, to neighbours one lower): the amount into out[d] (taken by the receiver
// in the next phase, which learns of it from its inb bit) or, across the border, into
// the mailbox accumulator. Returns whether flow left the tile (to t or the border).
// A step costs what its slowest warp's chain of dependent instructions costs (PC
// sampling: the other warps wait at the barriers), so steps are written for short
// chains.
// Other step forms measured and not kept: kernels/NOTES.md, push_phase.
template <int D>
__device__ u32 push_phase(TileSmem<D>& s, Px<D>* px, int cur, u64* sink) {
    const u32* h = s.h[cur];
    u32 left = 0;
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        Px<D>& q = px[k];
        if (q.e == 0 || q.h >= INF) continue;
        const u32 i = threadIdx.x + k * BDIM;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        u32 hv[D];
#pragma unroll
        for (int d = 0; d < D; ++d) hv[d] = h[halo_neighbour(hi, d)];
        // The amounts, t-link first, as a chain of 32-bit min / subtract on the excess
        // (capped at 2^32 - 1: a larger excess pushes the rest next step) with no
        // branch in it: the step's latency is the longest such chain of dependent
        // instructions in the tile, and the branchy per-arc form's chain was longer.
        const u32 e0 = (q.e >> 32) ? 0xffffffffu : (u32)q.e;
        u32 rest = e0;
        const u32 at = umin32(rest, q.h == 1 ? q.tres : 0u);
        rest -= at;
        u32 a[D];
#pragma unroll
        for (int d = 0; d < D; ++d) {
            a[d] = umin32(rest, hv[d] + 1u == q.h ? q.res[d] : 0u);
            rest -= a[d];
        }
        q.e -= e0 - rest;
        if (at) {
            q.tres -= at;
            *sink += at;
            left = 1;
        }
#pragma unroll
        for (int d = 0; d < D; ++d) {
            if (!a[d]) continue;
            q.res[d] -= a[d];
            const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
            if (inside_tile(nx, ny)) {
                s.out[d][i] = a[d];
                reinterpret_cast<unsigned char*>(&s.inb[tile_neighbour(i, d)])[d ^ 1] = 1;
            } else {
                s.bout[d][(nx < 0 || nx >= TW) ? ly : TW + lx] += a[d];
                left = 1;
            }
        }
    }
    return left;
}

// Pull/relabel phase: every pixel takes the flow pushed to it (excess and reverse
// residual); an active pixel with no admissible arc goes to one above its lowest residual
// neighbour. New heights go to the other buffer (Jacobi: labels stay valid), and to this
// one in the next step; unchanged heights are in both already. Returns whether this
// thread holds an active pixel with a finite height.
template <int D>
__device__ u32 relabel_phase(const Params& p, TileSmem<D>& s, Px<D>* px, int cur, u32* relabels) {
    const u32* h = s.h[cur];
    u32* next = s.h[cur ^ 1];
    u32 active = 0;
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        Px<D>& q = px[k];
        const u32 i = threadIdx.x + k * BDIM;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        const typename Inb<D>::T in = s.inb[i];
        // the neighbours' heights are loaded with the arrival flags, not after the
        // flow is taken: one shared-memory round trip less on the step's chain (but
        // for 8C in 32-row tiles, where the eight more live registers spill)
        const bool early = D == 4 || TH < 32;
        u32 hv[D];
#pragma unroll
        for (int d = 0; d < D; ++d) hv[d] = early && q.h < INF ? h[halo_neighbour(hi, d)] : INF;
        if (in) {
            s.inb[i] = 0;
            u32 f[D];
            u64 add = 0;
            auto take = [&](int d) {
                q.res[d] += f[d];
                add += f[d];
            };
            // 4C: every arrival is loaded before any is taken, so the loads overlap (the
            // 8C kernels have no registers for eight: each is taken as it comes)
#pragma unroll
            for (int d = 0; d < D; ++d) {
                f[d] = ((in >> (8 * d)) & 0xffu) ? s.out[d ^ 1][tile_neighbour(i, d)] : 0u;
                if (D == 8) take(d);
            }
#pragma unroll
            for (int d = 0; D == 4 && d < D; ++d) take(d);
            q.e += add;
        }
        if (q.e && q.h < INF) {
            u32 m = q.tres ? 0u : INF;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                if (!early) hv[d] = h[halo_neighbour(hi, d)];
                m = umin32(m, q.res[d] ? hv[d] : INF);
            }
            // with valid labels m + 1 >= h; below only when stale halo heights (concurrent
            // variant) let a neighbour push uphill: the label is then repaired downwards
            if (m + 1u != q.h) {
                q.h = (m >= p.hmax - 1u) ? INF : m + 1u;
                q.mark = 2;
                ++*relabels;
            }
            if (q.h < INF) active = 1;
        }
        if (q.mark) {
            next[hi] = q.h;
            --q.mark;
        }
    }
    return active;
}

// Writes the tile back, leaves the flow pushed across the border in the tile's mailbox
// slots, tells the receiving tiles and updates the tile's active flag.
template <int D>
__device__ void store_tile(const Params& p, TileSmem<D>& s, const Px<D>* px, u32 t, u32 active) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    const u32 flag = s.flag;
    // The neighbours to mail are collected in their own word (cleared at load), so the
    // store needs no barrier before it to reset one that other threads read
    // (kernels/NOTES.md, send_mail).
#pragma unroll
    for (u32 k = 0; k < PPT; ++k) {
        const u32 i = threadIdx.x + k * BDIM;
        p.exc[base + i] = px[k].e;
        p.tres[base + i] = px[k].tres;
        st_relaxed(&p.h[base + i], px[k].h);
#pragma unroll
        for (int d = 0; d < D; ++d) p.res[(size_t)d * p.npix + base + i] = px[k].res[d];
    }
    for (u32 k = threadIdx.x; k < (u32)D * PSLOTS; k += BDIM) {
        const u32 f = s.bout[k / PSLOTS][k % PSLOTS];
        if (!f) continue;
        const int d = (int)(k / PSLOTS), slot = (int)(k % PSLOTS);
        // the slot's pixel: a row index on the sides it leaves sideways, else a column
        const bool xout = slot < TW && dir_dx(d) != 0;
        const int lx = xout ? (dir_dx(d) > 0 ? TW - 1 : 0) : slot - TW;
        const int ly = xout ? slot : (dir_dy(d) > 0 ? TH - 1 : 0);
        atomicAdd(&p.pend[pend_index<D>(t, d, lx, ly)], f);
        const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
        const int ox = nx < 0 ? 0 : nx >= TW ? 2 : 1, oy = ny < 0 ? 0 : ny >= TH ? 2 : 1;
        atomicOr(&s.mailto, 1u << (oy * 3 + ox));
    }
    __syncthreads();
    const u32 mail = s.mailto;
    for (u32 k = threadIdx.x; mail && k < 9; k += BDIM) {
        if (!((mail >> k) & 1u)) continue;
        __threadfence();
        send_mail(p, (ty + k / 3u - 1u) * p.tiles_x + tx + k % 3u - 1u);
    }
    if (threadIdx.x == 0) {
        set_tile_active(p, t, flag, active);
        if (CALM(D)) p.tile_calm[t] = 0u;
        if (s.sink) atomicAdd(&p.ctl->sink_flow, s.sink);
        if (s.relabels) atomicAdd(&p.ctl->relabels, (u64)s.relabels);
    }
}

template <int D>
__device__ __forceinline__ u32 any_active(const Px<D>* px) {
    u32 active = 0;
#pragma unroll
    for (u32 k = 0; k < PPT; ++k)
        if (px[k].e && px[k].h < INF) active = 1;
    return __syncthreads_or(active);
}

// Discharges tile t (flagged active or mailed). `region_first`: run a region relabel
// before the first step (heights may be stale since the last global relabel), but for 8C
// tiles that got mail. With
// `region_every`, a region relabel also runs whenever no flow has left the tile for that
// many steps: stuck excess then gets exact labels at once (or is found trapped) instead
// of climbing one label per step.
template <int D>
__device__ void discharge_tile(const Params& p, TileSmem<D>& s, u32 t, bool region_first) {
    PROFILE(const u64 c0 = cycles();)
    Px<D> px[PPT];
    load_tile<D>(p, s, px, t);
    const bool mailed = s.mail != 0;
    u64 iters = 0, steps = 0;
    int cur = 0;
    u32 active = any_active<D>(px);
    // An 8C tile that got mail starts its steps from the heights it has, with no region
    // relabel first: faster on 8C energies, where on 4C it depends on the energy; other
    // rules for skipping it were worse overall (kernels/NOTES.md, discharge_tile).
    if (!active || (D == 8 && mailed)) region_first = false;
    if (region_first) {
        iters += region_relabel<D>(p, s, px, cur);
        active = any_active<D>(px);
    }
    const bool worked = active || region_first || mailed;
    u64 sink = 0;
    u32 relabels = 0, stalled = 0;
    while (active) {
        // whether flow left the tile is only needed to count stalled steps
        const u32 left = __syncthreads_or(push_phase<D>(s, px, cur, &sink));
        active = relabel_phase<D>(p, s, px, cur, &relabels);
        active = __syncthreads_or(active);
        cur ^= 1;
        ++steps;
        stalled = left ? 0u : stalled + 1u;
        if (!active || steps >= p.step_budget) break;
        if (p.region_every && stalled >= p.region_every) {
            iters += region_relabel<D>(p, s, px, cur);
            active = any_active<D>(px);
            stalled = 0;
        }
    }
    shared_add<D>(&s.sink, sink);
    shared_add<D>(&s.relabels, relabels);
    if (worked)
        store_tile<D>(p, s, px, t, active);
    else if (threadIdx.x == 0)
        set_tile_active(p, t, s.flag, 0u);
    if (threadIdx.x == 0) {
        if (steps) {
            atomicAdd(&p.activity[t], 1u);  // no load on the visit's chain
            atomicAdd(&p.ctl->tile_visits, 1u);
            atomicAdd(&p.ctl->steps, steps);
        }
        if (iters) atomicAdd(&p.ctl->bfs_iters, iters);
        atomicAdd(&p.ctl->tile_loads, 1u);
        PROFILE(atomicAdd(&p.ctl->cyc_discharge, cycles() - c0);)
    }
}

// Output: mask of the pixels that cannot reach t (255) in row-major order.
__device__ void mask_tile(const Params& p, u32 t) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const u32 gx = tx * TW + i % TW, gy = ty * TH + i / TW;
        if (gx < p.width && gy < p.height) p.mask[gy * p.width + gx] = p.h[base + i] >= INF ? 255 : 0;
    }
}

// Whether tile t needs a discharge visit this round: flagged active, mailed, or every
// tile on a revisit round. Takes the tile's mail as it asks (where there is mail a visit
// follows; a round trip less than asking first and taking it in load_tile) and keeps
// the tile's flags for the visit in s.flag and s.mail. The flags can change under the
// block's feet (mail from concurrently running tiles), so the block decides together.
template <int D>
__device__ __forceinline__ bool wants_visit(const Params& p, TileSmem<D>& s, u32 t, bool revisit) {
    u32 want = 0;
    if (threadIdx.x == 0) {
        const u32 active = p.tile_active[t], mail = take_mail(p, t);
        if (mail) __threadfence();
        s.flag = active;
        s.mail = mail;
        want = revisit || active || mail;
    }
    return __syncthreads_or(want) != 0;
}

// ---------------------------------------------------------------------------------
// Entry points: single passes (host-driven scheme), one block per tile.

template <int D>
__device__ void init_entry(const Params& p) {
    __shared__ u64 folded;
    if (threadIdx.x == 0) folded = 0;
    __syncthreads();
    init_tile<D>(p, blockIdx.x, &folded);
    __syncthreads();
    if (threadIdx.x == 0 && folded) atomicAdd(&p.ctl->sink_flow, folded);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_init4(const Params p) { init_entry<4>(p); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_init8(const Params p) { init_entry<8>(p); }

// ---------------------------------------------------------------------------------
// Dynamic update (Kohli & Torr, as in CUDA Cuts): the residual graph the last solve left
// becomes a preflow of the new capacities (Params::in_*; the last ones in old_*), every
// height 0, as init_tile builds one from scratch, and the solve resumes from it. Each
// pixel rewrites only its own arcs: an arc's net flow g = c_old - res stays where the new
// capacities allow it (-c'(q->p) <= g <= c'(p->q)) and is clamped where they do not; the
// pixel at the other end clamps the same flow from its side, so the two agree. The flow
// into t stays up to the new t capacity. Where a pixel's new source capacity plus net
// inflow falls short of what it sends on, the shortfall is added to both its terminal
// capacities (off): every cut grows by it, so the solve's flow less the offsets' total is
// the new max flow, and no excess is ever negative.
template <int D>
__device__ void reparam_pixel(const Params& p, u32 t, u32 i, u64* sums) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP, wh = p.width * p.height;
    const int lx = (int)(i % TW), ly = (int)(i / TW);
    const u32 gx = tx * TW + (u32)lx, gy = ty * TH + (u32)ly;
    p.h[base + i] = 0;
    p.gh[base + i] = 0;
    if (gx >= p.width || gy >= p.height) return;  // padding: no arcs, no terminals
    const u32 q = gy * p.width + gx;
    long long net = p.in_src[q];  // what the pixel takes in: the source arc, saturated ...
    u64 changed = p.in_src[q] != p.old_src[q] || p.in_sink[q] != p.old_sink[q];
    for (int d = 0; d < D; ++d) {
        const size_t a = (size_t)d * p.npix + base + i;
        u32 r = p.res[a];
        if (!inside_tile(lx + dir_dx(d), ly + dir_dy(d))) r += take_pending<D>(p, tx, ty, lx, ly, d);
        const int nx = (int)gx + dir_dx(d), ny = (int)gy + dir_dy(d);
        const bool neighbour = nx >= 0 && ny >= 0 && nx < (int)p.width && ny < (int)p.height;
        const long long c_old = p.old_edges[(size_t)d * wh + q], c_new = p.in_edges[(size_t)d * wh + q];
        const long long c_back = neighbour ? p.in_edges[(size_t)(d ^ 1) * wh + (u32)ny * p.width + (u32)nx] : 0;
        long long g = c_old - (long long)r;  // net flow p -> q
        g = g > c_new ? c_new : g < -c_back ? -c_back : g;
        p.res[a] = (u32)(c_new - g);
        net -= g;  // ... less its net outflow
        changed += c_old != c_new;
    }
    const long long t_new = p.in_sink[q];
    const long long sent = (long long)((u64)(u32)p.old_sink[q] + p.off[base + i] - p.tres[base + i]);
    long long into_t = sent < t_new ? sent : t_new, offset = 0;
    if (net < into_t) into_t = net > 0 ? net : 0;
    if (net < 0) offset = -net;
    long long e = net + offset - into_t, tres = t_new + offset - into_t;
    const long long fold = e < tres ? e : tres;  // as init_tile folds min(s, t)
    e -= fold;
    tres -= fold;
    into_t += fold;
    if (t_new + offset > 0xffffffffLL) atomicAdd(&sums[SUM_OVERFLOW], 1ull);
    p.exc[base + i] = (u64)e;
    p.tres[base + i] = (u32)tres;
    p.off[base + i] = (u32)offset;
    if (into_t) atomicAdd(&sums[REPARAM_SUMS], (u64)into_t);
    if (offset) atomicAdd(&sums[SUM_OFFSET], (u64)offset);
    if (changed) atomicAdd(&sums[SUM_CHANGED], changed);
}

// One block a tile: the block's sums in shared memory (REPARAM_SUMS words and the flow
// kept into t), then one atomic each into Params::sums and Ctl::sink_flow.
template <int D>
__device__ void reparam_entry(const Params& p) {
    __shared__ u64 sums[REPARAM_SUMS + 1];
    for (u32 k = threadIdx.x; k <= REPARAM_SUMS; k += BDIM) sums[k] = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < TP; i += BDIM) reparam_pixel<D>(p, blockIdx.x, i, sums);
    reset_tile(p, blockIdx.x);
    __syncthreads();
    for (u32 k = threadIdx.x; k <= REPARAM_SUMS; k += BDIM) {
        if (!sums[k]) continue;
        if (k < REPARAM_SUMS) atomicAdd(&p.sums[k], sums[k]);
        else atomicAdd(&p.ctl->sink_flow, sums[k]);
    }
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_reparam4(const Params p) { reparam_entry<4>(p); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_reparam8(const Params p) { reparam_entry<8>(p); }

template <int D>
__device__ void gr_round_entry(const Params& p, u32 round) {
    DYN_SMEM(smem);
    BfsSmem& s = *reinterpret_cast<BfsSmem*>(smem);
    const u32 t = blockIdx.x;
    u32* dirty = p.tile_dirty + (round & 1u) * p.ntiles;
    if (round > 0 && !dirty[t]) return;
    __syncthreads();
    if (threadIdx.x == 0) dirty[t] = 0;
    u64 iters = 0;
    const u32 border = gr_tile<D>(p, s, t, round == 0, 0u, 0u, &iters, INF);
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    for (u32 k = threadIdx.x; k < 9; k += BDIM) {
        const int nx = (int)tx + (int)(k % 3) - 1, ny = (int)ty + (int)(k / 3) - 1;
        if (((border >> k) & 1u) && nx >= 0 && ny >= 0 && nx < (int)p.tiles_x && ny < (int)p.tiles_y)
            atomicOr(&p.tile_dirty[((round + 1u) & 1u) * p.ntiles + (u32)(ny * (int)p.tiles_x + nx)], 1u);
    }
    if (threadIdx.x == 0) atomicAdd(&p.ctl->bfs_iters, iters);
}

extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_gr_round4(const Params p, u32 round) { gr_round_entry<4>(p, round); }
extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_gr_round8(const Params p, u32 round) { gr_round_entry<8>(p, round); }

// Discharges the tiles [first, first + gridDim.x) of the colour-ordered tile list.
template <int D>
__device__ void discharge_entry(const Params& p, u32 first, u32 revisit, u32 region_first) {
    DYN_SMEM(smem);
    TileSmem<D>& s = *reinterpret_cast<TileSmem<D>*>(smem);
    const u32 t = p.colour_tiles[first + blockIdx.x];
    if (!wants_visit<D>(p, s, t, revisit != 0)) return;
    discharge_tile<D>(p, s, t, region_first != 0);
}

extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_discharge4(const Params p, u32 first, u32 revisit, u32 region_first) {
    discharge_entry<4>(p, first, revisit, region_first);
}
extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_discharge8(const Params p, u32 first, u32 revisit, u32 region_first) {
    discharge_entry<8>(p, first, revisit, region_first);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_mask(const Params p) { mask_tile(p, blockIdx.x); }

// ---------------------------------------------------------------------------------
// Persistent cooperative solve: the whole schedule in one launch (after pr_init*).

#ifndef LIVECUT_EMU  // the persistent solve needs concurrent blocks
// Global relabel as one pass with no grid barrier inside: every tile relaxes once from
// scratch, and a tile whose border got lower has the neighbours that can use it
// (lowered_wakes) relax again, until none is left. Chaotic relaxation reaches the same
// fixpoint as level-synchronous BFS: exact distances to t. Its critical path is a chain
// of dependent tile relaxations, each a few BFS iterations but a long chain of loads,
// fences and atomics. Two ways to hand a tile to a block (see the queue and the wakes
// above):
//  * queue: each block first relaxes its own share (unless a neighbour queued one of
//    them meanwhile), then whatever neighbours queued, taken by any block;
//  * owners (Params::gr_owners): each block relaxes its own tiles, first from scratch,
//    then those that neighbours woke. A hop of the chain is the waker's fence, its
//    increment and the owner's poll, instead of a queue push (load, compare-and-swap,
//    slot) and pop (ticket, slot, claim, fence), which small grids wait on. On grids of
//    many tiles per block a busy owner holds up its other woken tiles, which then relax
//    later and more often: those keep the queue.
// Where its time goes, and the hand-overs and schedules tried: kernels/NOTES.md,
// bfs_pass.
__device__ bool wait_edge_neighbours(const Params& p, u32 tx, u32 ty, u32 rounds, u32* s_flag);

// 8C global relabels by the queue in square tiles (CALM) leave a calm tile (tile_calm: no
// t-link residual and neither a visit nor mail since its last initial relaxation, and
// not active) to its first wake instead of relaxing it from scratch (all INF, from INF
// halos) on its own: a tile no wake reaches cannot reach t and gets INF heights after
// the pass (fill_unreached). Not in the half-height tiles' module, where the code cost
// more than it saved, nor on 4C, where it cut relaxations but not the relabels' critical
// path, which the chain of hand-overs sets (kernels/NOTES.md, lazy_skip).
__device__ __forceinline__ bool lazy_skip(const Params& p, u32 t) {
    return p.tile_calm[t] && !ld_relaxed(&p.tile_mail[t]) && !p.tile_active[t];
}

// After the 8C queue's global relabel `epoch` (all blocks past its barrier): INF heights
// for the block's tiles that no relaxation of it reached, and gh words of this epoch
// for them (every relabel rewrites every pixel's, so a stored epoch never wraps round
// to a current one).
__device__ void fill_unreached(const Params& p, u32 epoch) {
    for (u32 t = blockIdx.x; t < p.ntiles; t += p.nblocks) {
        if (ld_relaxed(&p.tile_q[p.ntiles + t]) == epoch) continue;
        const u32 base = t * TP;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            p.h[base + i] = INF;
            p.gh[base + i] = gh_pack(epoch, p.rmask[base + i], INF);
        }
    }
}

// Where owners run both the global relabels and the discharge rounds (small 4C grids), a
// relabel follows the rounds with no grid barrier in between: each tile starts its first
// relaxation once its edge neighbours are done with the last round, so the relabel's
// wave runs while the round's slowest visits end, and the barrier that set up the pass
// (new epoch and stamp, q_pending) is the one after the last relabel. Only the module of
// half-height tiles, which the grids of few tiles take, has it: in the square tiles'
// module the code alone slowed the large 4C grids, which never take it. Owners wait for
// their own tiles' neighbours one tile at a time: waiting for all of them before the
// first relaxation was slower where blocks own two or three tiles.
// Where a small 4C grid's time goes, and taller relabel tiles tried: kernels/NOTES.md,
// RELABEL_FOLLOWS.
#define RELABEL_FOLLOWS (TH == 16)

// With `rounds` > 0 the pass follows that many discharge rounds by owners with no grid
// barrier in between (see RELABEL_FOLLOWS): a tile's first relaxation waits only until
// its edge neighbours are done with them, so that it takes all their mail (4C: mail
// crosses edges only). A tile next to one still in its visit has not started, so no
// visit sees heights of the new relabel, and a relaxation sees only heights of its own
// relabel (bfs_halo) and residual graphs with every visit in. False when the solve hangs.
template <int D, bool CAP>
__device__ bool bfs_pass(const Params& p, BfsSmem& s, u32 stamp, u32 epoch, u64* iters, u32 rounds, u32 cap) {
    const bool owners = p.gr_owners != 0u;
    u32 own = blockIdx.x;  // the block's next tile of its own share
    for (;;) {
        u32 t = own;
        if (own < p.ntiles) {
            own += p.nblocks;
            if (rounds && !wait_edge_neighbours(p, t % p.tiles_x, t / p.tiles_x, rounds, &s.item)) return false;
            if (!owners) {
                if (threadIdx.x == 0) s.item = CALM(D) && lazy_skip(p, t) ? 0u : q_take(p, t, stamp);
                __syncthreads();
                const u32 taken = s.item;
                __syncthreads();  // everyone has read it before thread 0 writes the next
                if (!taken) continue;
            }
        } else {
            if (own != Q_NONE) {
                q_token(p);
                own = Q_NONE;
            }
            PROFILE(const u64 w0 = cycles();)
            t = owners ? wait_woken_tile(p, &s.item, &s.taken) : q_pop(p, stamp, &s.item);
            if (threadIdx.x == 0) {
                PROFILE(atomicAdd(&p.ctl->bfs_wait, cycles() - w0);)
                atomicAdd(&p.ctl->bfs_pops, 1ull);
            }
            if (t == Q_NONE) return true;
        }
        const bool initial = owners ? own != Q_NONE : ld_relaxed(&p.tile_q[p.ntiles + t]) != epoch;
        gr_tile<D, CAP>(p, s, t, initial, epoch, stamp, iters, cap);
        if (owners) {
            // after the tile's own wakes are counted
            if (own == Q_NONE && threadIdx.x == 0) atomicSub(&p.ctl->q_pending, s.taken);
        } else {
            __syncthreads();
            if (threadIdx.x == 0) q_done(p, t, stamp);
        }
    }
}

// Claims the next tile index of a discharge phase: first blockIdx.x, then from a counter
// (the queue's head, reset by the barrier before the phase). All threads call it.
__device__ __forceinline__ u32 claim(const Params& p, u32* s_item) {
    __syncthreads();
    if (threadIdx.x == 0) *s_item = p.nblocks + atomicAdd(&p.ctl->q_head, 1u);
    __syncthreads();
    return *s_item;
}

// Waits until the edge neighbours of tile (tx, ty) are done with `rounds` discharge
// rounds (all threads call it; warp 0 polls). False when the solve hangs.
__device__ bool wait_edge_neighbours(const Params& p, u32 tx, u32 ty, u32 rounds, u32* s_flag) {
    if (threadIdx.x < 32u) {
        const long long start = clock64();
        u32 ok = 1;
        const u32 l = threadIdx.x;
        const int nx = (int)tx + (l == 0 ? 1 : l == 1 ? -1 : 0), ny = (int)ty + (l == 2 ? 1 : l == 3 ? -1 : 0);
        const bool mine = l < 4u && nx >= 0 && ny >= 0 && nx < (int)p.tiles_x && ny < (int)p.tiles_y;
        const u32* word = mine ? &p.tile_round[(u32)ny * p.tiles_x + (u32)nx] : nullptr;
        for (;;) {
            const bool waiting = mine && ld_acquire(word) < rounds;
            if (!__any_sync(0xffffffffu, waiting)) break;
            if (l == 0 && waited_too_long(p.ctl, start)) ok = 0;
            if (!__shfl_sync(0xffffffffu, ok, 0)) break;
            // no sleep between polls (see wait_woken_tile)
        }
        if (l == 0) *s_flag = ok;
    }
    __syncthreads();
    const u32 ok = *s_flag;
    __syncthreads();  // read by all before the flag's word is reused
    return ok != 0;
}

// One discharge phase: the tiles [first, first + count) of the colour-ordered list that
// want a visit (active, mailed, or all on a revisit round), each visited once. Tiles of
// one colour share no edge, so the halo heights stay frozen during the phase but for 8C
// corners (in the concurrent variant one phase holds every tile and they may be stale,
// which costs work, never exactness). 8C takes two colours, not the four that would
// freeze corners too: a phase costs a grid barrier and its slowest visit, and a stale
// corner height costs little. Blocks claim tiles one by one, idle ones included:
// queueing the wanted ones costs more in pops and end-of-phase detection than the
// claims it saves (kernels/NOTES.md, discharge_phase).
template <int D>
__device__ void discharge_phase(const Params& p, TileSmem<D>& s, u32 first, u32 count, bool revisit, bool region_first) {
    for (u32 k = blockIdx.x; k < count; k = claim(p, &s.item)) {
        const u32 t = p.colour_tiles[first + k];
        if (!wants_visit<D>(p, s, t, revisit)) continue;
        discharge_tile<D>(p, s, t, region_first);
    }
}

// Discharge rounds [round0, round0 + nrounds) by tile owners (Params::owned_discharge), with no
// grid barrier: block b visits its tiles b, b + nblocks, ... round by round, colour 0
// before colour 1, and a tile starts its visit of round g once its edge neighbours are
// done with the visit before it in the checkerboard order (colour 0: their round g - 1;
// colour 1: their round g). Any two tiles that share an edge thus visit in the order of
// the phase schedule, but a tile never waits for tiles it does not touch: a phase's
// slowest visit holds up only its neighbours. Every dependency points to an earlier
// (round, colour), which every block works through in order, so some tile can always go.
// A round is always whole (no early global relabel when all tiles went idle). 8C grids
// and grids of many tiles a block keep the phases (CudaConfig::owner_discharge_tiles).
// A second round's visit starts with a region relabel, as by phases (see discharge_tile).
// The concurrent variant by owners was tried: kernels/NOTES.md, discharge_owned.
template <int D>
__device__ void discharge_owned(const Params& p, TileSmem<D>& s, u32 round0, u32 nrounds) {
    for (u32 k = 0; k < nrounds; ++k) {
        const u32 g = round0 + k;
        const bool revisit = p.revisit_every && g % p.revisit_every == p.revisit_every - 1;
        for (u32 colour = 0; colour < MAX_COLOURS; ++colour) {
            for (u32 t = blockIdx.x; t < p.ntiles; t += p.nblocks) {
                const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
                if (((tx + ty) & 1u) != colour) continue;
                if (!wait_edge_neighbours(p, tx, ty, g + colour, &s.item)) return;
                if (wants_visit<D>(p, s, t, revisit)) discharge_tile<D>(p, s, t, k > 0);
                __syncthreads();
                // the tile's state before its neighbours may load it: the barrier orders the
                // block's stores before the release store, with no fence of its own in front
                // (kernels/NOTES.md, discharge_owned)
                if (threadIdx.x == 0) st_release(&p.tile_round[t], g + 1u);
            }
        }
    }
}

// Capped global relabels (Params::gr_cap_margin; seeded energies on 4C square tiles): the
// BFS stops at a cap gr_cap_margin above the highest height a pixel with excess had after
// the last relabel (note_active_heights). A pixel it does not reach gets the cap where it
// could reach t before (a lower bound of its distance, so the labelling stays valid) and
// keeps INF where it could not (for good: no flow enters a pixel at INF and none of its
// arcs ever opens). A capped relabel that leaves a pixel with excess at the cap (it may be
// trapped) is followed by a whole one, and one that finds no active tile by a whole one
// that decides: only a whole relabel ends the solve, so the termination test and the cut
// are as before. The cap stops the wave at tile borders (halo heights at the cap are no
// seeds; the Jacobi iterations start such pixels at the cap); bit_bfs may run on beyond
// it inside a tile, whose heights above the cap are then lowered to it. The margin, and
// other forms tried: kernels/NOTES.md, relabel_cap and relabel_cap_margin.
// The cap of relabel `epoch` (INF: whole) after one capped at `last` (INF: whole): that
// one left a pixel with excess at its cap where the highest such height is at the cap
// (derived here, not a flag of its own). The last relabel's highest height is 0 (whole)
// where it noted none: the solve's first relabel (Ctl starts zeroed) and one after a
// relabel that found no active tile. Block 0 clears what the next one reads.
__device__ u32 relabel_cap(const Params& p, Ctl* c, u32 epoch, u32 last) {
    volatile Ctl* vc = c;
    const u32 high = vc->gr_hact[(epoch - 1u) & 1u];
    __syncthreads();  // every thread has read it before block 0 clears the other one
    if (blockIdx.x == 0 && threadIdx.x == 0) c->gr_hact[epoch & 1u] = 0;
    return high && high < last ? high + p.gr_cap_margin : INF;
}

// After relabel `epoch` (all blocks past its barrier): the highest height of a pixel with
// excess in the block's active tiles.
__device__ void note_active_heights(const Params& p, Ctl* c, u32 epoch) {
    u32 high = 0;
    for (u32 t = blockIdx.x; t < p.ntiles; t += p.nblocks) {
        if (!p.tile_active[t]) continue;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const u32 h = p.h[t * TP + i];
            if (h < INF && p.exc[t * TP + i]) high = max(high, h);
        }
    }
    high = __reduce_max_sync(0xffffffffu, high);
    if (threadIdx.x % 32u == 0u && high) atomicMax(&c->gr_hact[epoch & 1u], high);
}

// The whole solve: an exact global relabel, then discharge rounds (one phase per tile
// colour, a grid barrier after each) until the next global relabel is due, until a
// global relabel finds no active tile. A relabel is due after gr_rounds rounds, or on
// 4C grids whose rounds go by phases once the flow-rate rule (rate_rule) says another
// round would lower the long-run rate; where owners run the rounds, after gr_few_rounds
// when the relabel found at most gr_few_tiles active tiles. On small grids most of the
// time goes to the tail, a few active tiles where each phase waits on one tile's visit.
// What the tail costs and what was tried against it: kernels/NOTES.md, the tail.
template <int D>
__device__ void solve_persistent(const Params& p) {
    DYN_SMEM(smem);
    __shared__ Snap snap;
    __shared__ u32 s_ok;
    Ctl* c = p.ctl;
    const u32 nb = p.nblocks;
    BfsSmem& bs = *reinterpret_cast<BfsSmem*>(smem);
    TileSmem<D>& ts = *reinterpret_cast<TileSmem<D>*>(smem);
    if (threadIdx.x == 0) snap = Snap{};
    __syncthreads();

    u32 rounds = 0;
    u64 bfs_iters = 0;
#ifdef LIVECUT_PROFILE
    u64 mark = cycles();
    // block 0 charges the time since the last barrier to the pass that just ended
    auto charge = [&](u64* to) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            const u64 now = cycles();
            *to += now - mark;
            mark = now;
        }
    };
#endif
    // the flow-rate rule decides the rounds of 4C grids whose rounds go by phases
    const bool rate = D == 4 && p.gr_rate_max != 0;
    // where owners run both the relabels and the rounds, a relabel follows the rounds
    // tile by tile (RELABEL_FOLLOWS)
    const bool follows = RELABEL_FOLLOWS && D == 4 && p.gr_owners && p.owned_discharge && !p.concurrent;
    // 8C rounds go by phases with no flow-rate rule: the last phase's barrier has ended
    // every visit, so a relabel needs no barrier of its own either. 4C grids whose rounds
    // go by phases keep it: the rule times the relabel from it, and in the square tiles'
    // module any change of code moved the times either way (kernels/NOTES.md,
    // solve_persistent).
    const bool phases8 = D == 8;
    // capped relabels (relabel_cap), not where a relabel follows the rounds: a block may
    // start it before another has noted the last one's active heights
    const bool caps = CAPS(D) && p.gr_cap_margin && !follows;
    __shared__ u32 s_cap;  // the last relabel's cap (in shared memory: no register across the solve)
    if (CAPS(D) && threadIdx.x == 0) s_cap = INF;
    // the budget's end, on the clock every SM shares; block 0 writes it before it arrives
    // at the first barrier, whose last block is the first to read it
    if (p.budget_ns != NO_BUDGET && blockIdx.x == 0 && threadIdx.x == 0) c->deadline_ns = now_ns() + p.budget_ns;
    for (;;) {
        // 1. exact global relabel, with no barrier in front where the barrier after the
        // last one set it up (NEXT_GR below)
        const u32 after = follows ? rounds : 0u;
        if (!after && !(phases8 && rounds) && !grid_sync(c, nb, &snap, &s_ok, NEXT_GR, &p, rate ? RULE_START : 0u)) return;
        PROFILE(charge(&c->path_discharge);)
        const u32 gr_epoch = snap.gr_epoch;
        const u32 cap = caps ? relabel_cap(p, c, gr_epoch, s_cap) : INF;
        if (cap < INF && blockIdx.x == 0 && threadIdx.x == 0) ++c->gr_capped;
        if (!bfs_pass<D, CAPS(D)>(p, bs, snap.stamp, gr_epoch, &bfs_iters, after, cap)) return;
        if (!grid_sync(c, nb, &snap, &s_ok, follows || phases8 ? NEXT_GR : NEXT_PASS, &p, rate ? RULE_MARK : 0u)) return;
        if (CALM(D) && !p.gr_owners) fill_unreached(p, gr_epoch);
        PROFILE(charge(&c->path_bfs);)
        if (caps && threadIdx.x == 0) s_cap = cap;  // read by all before the barrier above
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            volatile Ctl* vc = c;
            const u32 row = vc->global_relabels;
#ifdef LIVECUT_PROFILE
            if (row < LOG_ROWS) {
                u64* l = p.log + row * LOG_COLS;
                l[0] = vc->path_bfs;
                l[1] = vc->path_discharge;
                l[2] = snap.active_tiles;
                l[3] = vc->tile_visits;
                l[4] = vc->steps;
                l[5] = vc->bfs_tiles;
                l[6] = vc->sink_flow;
                l[7] = vc->relabels;
            }
#endif
            c->global_relabels = row + 1u;
        }
        if (snap.active_tiles == 0) {
            if (cap == INF) break;  // optimal: no active pixel can reach t
            continue;               // only a whole relabel decides (none noted: relabel_cap)
        }
        // the budget is spent: the cut of this whole relabel (the pixels that cannot reach
        // t) is the answer, and the preflow stays for the next call to continue from;
        // not before the call's first discharge rounds, so that every call gets on
        if (cap == INF && snap.late && rounds > 0) {
            if (blockIdx.x == 0 && threadIdx.x == 0) c->stopped = 1u;
            break;
        }
        if (caps) note_active_heights(p, c, gr_epoch);

        // 2. discharge rounds until the next global relabel is due
        if (p.owned_discharge && !p.concurrent) {
            // the next global relabel's barrier ends the rounds
            // a relabel that found few active tiles is followed by more rounds (CudaConfig::
            // few_active_tiles; kernels/NOTES.md, few_active_tiles)
            const u32 nr = snap.active_tiles <= p.gr_few_tiles ? p.gr_few_rounds : p.gr_rounds;
            discharge_owned<D>(p, ts, rounds, nr);
            rounds += nr;
            if (blockIdx.x == 0 && threadIdx.x == 0) c->rounds = rounds;
            if (rounds >= p.max_rounds) {
                if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_ROUND_CAP);
                return;
            }
            continue;
        }
        const u64 work0 = snap.relabels;
        const u64 work_cap = (u64)p.npix * p.gr_work_num / 16u;
        for (u32 since = 0;;) {
            const bool revisit = p.revisit_every && rounds % p.revisit_every == p.revisit_every - 1;
            const u32 phases = p.concurrent ? 1u : MAX_COLOURS;
            for (u32 phase = 0; phase < phases; ++phase) {
                const u32 first = p.concurrent ? 0u : p.colour_start[phase];
                const u32 count = p.concurrent ? p.ntiles : p.colour_start[phase + 1] - first;
                discharge_phase<D>(p, ts, first, count, revisit, since > 0);
                const u32 rule = rate && phase + 1 == phases ? RULE_DECIDE : 0u;
                if (!grid_sync(c, nb, &snap, &s_ok, NEXT_PASS, &p, rule)) return;
                PROFILE(charge(&c->path_discharge);)
            }
            ++rounds;
            ++since;
            if (blockIdx.x == 0 && threadIdx.x == 0) c->rounds = rounds;
            if (rounds >= p.max_rounds) {
                if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_ROUND_CAP);
                return;
            }
            if (snap.active_tiles == 0 && snap.mail_tiles == 0) break;
            if (snap.relabels - work0 > work_cap) break;
            if (since >= p.gr_rounds && (!rate || since >= p.gr_rate_max || !snap.more)) break;
        }
    }
    // output
    for (u32 t = blockIdx.x; t < p.ntiles; t += nb) mask_tile(p, t);
    if (threadIdx.x == 0 && bfs_iters) atomicAdd(&c->bfs_iters, bfs_iters);
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_DONE);
}

extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_solve4(const Params p) { solve_persistent<4>(p); }
extern "C" __global__ void __launch_bounds__(BDIM, 1024 / BDIM) pr_solve8(const Params p) { solve_persistent<8>(p); }

// The capacity of the cut in Params::mask (255: source side) in the input capacities, into
// Ctl::cut_capacity (zero before): what a solve stopped at its budget certifies, its flow
// into t being at most the maximum flow.
template <int D>
__device__ void cut_capacity_entry(const Params& p) {
    __shared__ u64 block_sum;
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    const u32 wh = p.width * p.height;
    u64 sum = 0;
    for (u32 q = blockIdx.x * BDIM + threadIdx.x; q < wh; q += gridDim.x * BDIM) {
        if (!p.mask[q]) {
            sum += (u32)p.in_src[q];
            continue;
        }
        sum += (u32)p.in_sink[q];
        const int x = (int)(q % p.width), y = (int)(q / p.width);
        for (int d = 0; d < D; ++d) {
            const int nx = x + dir_dx(d), ny = y + dir_dy(d);
            const bool inside = nx >= 0 && ny >= 0 && nx < (int)p.width && ny < (int)p.height;
            if (inside && !p.mask[(u32)ny * p.width + (u32)nx]) sum += (u32)p.in_edges[(size_t)d * wh + q];
        }
    }
    if (sum) atomicAdd(&block_sum, sum);
    __syncthreads();
    if (threadIdx.x == 0 && block_sum) atomicAdd(&p.ctl->cut_capacity, block_sum);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_cut4(const Params p) { cut_capacity_entry<4>(p); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_cut8(const Params p) { cut_capacity_entry<8>(p); }

#endif

// Sizes the host must agree with (checked once when the engine starts).
extern "C" __global__ void pr_layout(u32* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (u32)sizeof(Params);
        out[1] = (u32)sizeof(Ctl);
        out[2] = (u32)sizeof(TileSmem<4>);
        out[3] = (u32)sizeof(TileSmem<8>);
        out[4] = (u32)sizeof(BfsSmem);
        out[5] = (u32)BDIM;
        out[6] = (u32)TH;
    }
}
