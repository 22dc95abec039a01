// Exact push-relabel max-flow on 2D grids (4- or 8-connected), CUDA Cuts style, tiled.
//
// Layout: the grid is padded to whole TW x TH tiles and every per-pixel array is stored
// tile by tile (tile t holds pixels [t*TP, (t+1)*TP), row-major inside the tile), so one
// tile is one contiguous, coalesced chunk. Per pixel: residual capacity towards each
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
//    state and any set of tiles may run at once: with colours (tiles of one colour never
//    touch) the halo heights are frozen during a phase and labels stay valid; in the
//    concurrent variant they may be stale, which costs work, never exactness. Tiles with
//    neither active pixels nor mail are skipped and revisited every K rounds.
//  * global relabel: exact BFS from the sink in the residual graph as a fixpoint of
//    tile-local relaxations looped on the device (no host copy per level). Round 0 takes
//    all mail, builds the residual bits and relaxes each tile alone; later rounds relax
//    the tiles whose halo changed, until a round changes no tile border. Active flags
//    are computed in the same passes.
//  * termination: after an exact global relabel, no pixel with excess has a finite
//    height, i.e. no active pixel can reach the sink: the preflow's value is maximum and
//    the pixels at INF (cannot reach t) are the source side of a minimum cut.
//
// Every entry point exists in a persistent cooperative form (pr_solve*, the whole solve
// in one launch with grid barriers) and as single passes for the host-driven scheme.
//
// Kernels are written so that all per-pixel state that crosses a barrier lives in shared
// memory and every pixel loop is strided by BDIM: the same source then also runs with one
// thread per block on the host (the development emulation), which is one legal schedule.

#ifndef LIVECUT_EMU
typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;
#define BDIM 512
#define DYN_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#endif

#define TW 32
#define TH 32
#define TP (TW * TH)
#define HW (TW + 2)
#define HH (TH + 2)
#define HP (HW * HH)
#define NHALO (2 * HW + 2 * TH)
#define PSLOTS 64  // mailbox slots per tile and direction (a column or a row of the border)
#define INF 0x7fffffffu
#define MAX_COLOURS 4
#define BIT_SINK 0x100u    // residual bits: t-link residual
#define BIT_EXCESS 0x200u  // ... the pixel holds excess

// Status codes written to Ctl::status.
#define ST_RUNNING 0u
#define ST_DONE 1u
#define ST_HANG 2u
#define ST_ROUND_CAP 3u

// Counters shared by all blocks. Totals only grow (active/mail counts follow their flags);
// decisions compare snapshots that the last block to reach a grid barrier copies, so every
// block decides the same.
struct Snap {
    u64 relabels;
    u32 active_tiles;
    u32 mail_tiles;
    u32 gr_changes;
    u32 queue;
};

struct Ctl {
    u64 sink_flow;     // flow delivered to t (includes the folded terminal flow)
    u64 relabels;      // local relabels, total
    u64 steps;         // tile push/relabel steps, total (cost measure)
    u64 bfs_iters;     // tile BFS iterations, total (cost measure)
    u64 cyc_discharge; // SM cycles inside discharge visits, summed over tiles
    u64 cyc_bfs;       // SM cycles inside BFS tile relaxations, summed over tiles
    u32 active_tiles;  // tiles whose active flag is set
    u32 mail_tiles;    // tiles whose mail flag is set
    u32 gr_changes;    // BFS tile visits that left a finite or changed border, total
    u32 queue;         // tile claims, total
    u32 tile_visits;   // tiles discharged, total
    u32 rounds;        // discharge rounds
    u32 global_relabels;
    u32 bfs_rounds;
    u32 bfs_tiles;     // tiles relaxed in BFS rounds, total
    u32 status;
    u32 bar_count;
    u32 bar_gen;
    Snap snap;
};

struct Params {
    u32 width, height;             // the real grid
    u32 tiles_x, tiles_y, ntiles;  // padded grid in tiles
    u32 npix;                      // ntiles * TP
    u32 hmax;                      // heights >= hmax cannot reach t (pixels + 1)
    u32 ncolours;                  // 2 (4C) or 4 (8C)
    u32 colour_start[MAX_COLOURS + 1];
    u32 step_budget;               // push/relabel steps per tile visit
    u32 region_every;              // region relabel every this many steps of a visit
    u32 revisit_every;             // visit idle tiles every K rounds (0: never)
    u32 gr_rounds;                 // global relabel after at most this many rounds
    u32 gr_work_num;               // ... or after relabels > npix * num / 16
    u32 max_rounds;                // safety cap on discharge rounds
    u32 nblocks;                   // blocks of a persistent launch
    u32 concurrent;                // 1: all tiles in one phase per round
    u32 pad0;
    u32* res;            // D * npix residuals, res[d * npix + i]
    u32* tres;           // npix
    u64* exc;            // npix
    u32* h;              // npix
    u16* rmask;          // npix: bit d = res[d] > 0, BIT_SINK, BIT_EXCESS (global relabel)
    u32* pend;           // ntiles * D * PSLOTS: flow pushed out across the border, not taken yet
    u32* tile_active;    // ntiles: the tile has active pixels
    u32* tile_mail;      // ntiles: a neighbour left flow in its mailbox for the tile
    u32* tile_dirty;     // 2 * ntiles (BFS rounds, by round parity)
    u32* activity;       // ntiles: discharge visits with work
    const u32* colour_tiles;  // ntiles tile ids grouped by colour
    Ctl* ctl;
    const int* in_src;   // row-major W*H input capacities
    const int* in_sink;
    const int* in_edges; // D * W*H
    unsigned char* mask; // row-major W*H output: 255 = cannot reach t
};

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
__device__ __forceinline__ u64 umin64(u64 a, u64 b) { return a < b ? a : b; }

#ifndef LIVECUT_EMU
__device__ __forceinline__ u64 cycles() { return (u64)clock64(); }
__device__ __forceinline__ u32 ld_relaxed(const u32* p) {
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed(u32* p, u32 v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ u32 ld_acquire(const u32* p) {
    u32 v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(u32* p, u32 v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
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

__device__ __forceinline__ bool inside_tile(int lx, int ly) {
    return lx >= 0 && lx < TW && ly >= 0 && ly < TH;
}

// Marks tile `t` active, keeping Ctl::active_tiles equal to the number of set flags.
__device__ __forceinline__ void set_tile_active(const Params& p, u32 t, u32 active) {
    const u32 old = atomicExch(&p.tile_active[t], active);
    if (old != active) atomicAdd(&p.ctl->active_tiles, active ? 1u : 0xffffffffu);
}

// Mail: the sender adds to its mailbox slots, fences, then raises the receiver's flag; the
// receiver takes the flag, fences, then empties the slots. Flow left in a slot therefore
// always has its flag raised, and a receiver that saw no flag may skip the slots.
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

// Takes the flow neighbours left for border pixel i of tile (tx, ty) arriving along its
// arc in direction d: the mailbox slot of the neighbour's reverse arc, emptied atomically.
template <int D>
__device__ __forceinline__ u32 take_pending(const Params& p, u32 tx, u32 ty, int lx, int ly, int d) {
    const int gx = (int)(tx * TW) + lx + dir_dx(d), gy = (int)(ty * TH) + ly + dir_dy(d);
    if (gx < 0 || gy < 0 || gx >= (int)(p.tiles_x * TW) || gy >= (int)(p.tiles_y * TH)) return 0;
    const u32 nt = (u32)(gy / TH) * p.tiles_x + (u32)(gx / TW);
    const u32 slot = pend_index<D>(nt, d ^ 1, gx % TW, gy % TH);
    return p.pend[slot] ? atomicExch(&p.pend[slot], 0u) : 0u;
}

__device__ __forceinline__ bool on_border(u32 i) {
    const u32 lx = i % TW, ly = i / TW;
    return lx == 0 || ly == 0 || lx == TW - 1 || ly == TH - 1;
}

// ---------------------------------------------------------------------------------
// Grid barrier for the persistent kernel (all blocks co-resident: cooperative launch).
// The last block to arrive copies the counters into Ctl::snap before releasing.
// Returns false when it waited too long (the solve is then abandoned with ST_HANG).

#ifndef LIVECUT_EMU
__device__ bool grid_sync(Ctl* c, u32 nblocks, Snap* s_snap, u32* s_ok) {
    __syncthreads();
    if (threadIdx.x == 0) {
        u32 ok = 1;
        const u32 gen = ld_acquire(&c->bar_gen);
        __threadfence();
        const u32 arrived = atomicAdd(&c->bar_count, 1u);
        if (arrived == nblocks - 1) {
            c->bar_count = 0;
            volatile Ctl* vc = c;
            c->snap.relabels = vc->relabels;
            c->snap.active_tiles = vc->active_tiles;
            c->snap.mail_tiles = vc->mail_tiles;
            c->snap.gr_changes = vc->gr_changes;
            c->snap.queue = vc->queue;
            __threadfence();
            st_release(&c->bar_gen, gen + 1);
        } else {
            const long long start = clock64();
            while (ld_acquire(&c->bar_gen) == gen) {
                __nanosleep(32);
                if (clock64() - start > 40000000000LL) {  // ~20 s: something is broken
                    atomicExch(&c->status, ST_HANG);
                    ok = 0;
                    break;
                }
            }
        }
        __threadfence();
        volatile Snap* vs = &c->snap;
        s_snap->relabels = vs->relabels;
        s_snap->active_tiles = vs->active_tiles;
        s_snap->mail_tiles = vs->mail_tiles;
        s_snap->gr_changes = vs->gr_changes;
        s_snap->queue = vs->queue;
        if (ld_acquire(&c->status) == ST_HANG) ok = 0;
        *s_ok = ok;
    }
    __syncthreads();
    return *s_ok != 0;
}
#endif

// ---------------------------------------------------------------------------------
// Shared memory of one tile.

#define FWORDS (TP / 32)  // frontier bitset words (one per tile row)

template <int D>
struct TileSmem {
    u32 h[HP];             // heights with halo
    u64 exc[TP];
    u64 inflow[TP];        // flow pushed in by in-tile neighbours this step
    u32 res[D][TP];
    u32 tres[TP];
    u32 bout[D][PSLOTS];   // flow pushed across the border this visit, by mailbox slot
    u64 list[TP];          // relabels of a step: (height << 10) | pixel
    u32 fb[3][FWORDS];     // frontier bitsets (region relabel)
    u64 sink;              // flow pushed to t during the visit
    u32 relabels;
    u32 mail;              // mail taken at load / neighbour tiles mailed at store (bit per offset)
    u32 count;             // entries in `list`
    u32 pad;
};

struct BfsSmem {
    u32 h[HP];
    u32 h0[TP];           // heights as loaded
    u32 m[TP];            // residual bits
    u32 fb[3][FWORDS];
    u32 mail;
};

// ---------------------------------------------------------------------------------
// Initialisation: fold terminal arcs, build the blocked residual arrays.

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
        p.h[base + i] = 0;
        for (int d = 0; d < D; ++d) p.res[(size_t)d * p.npix + base + i] = real ? (u32)p.in_edges[(size_t)d * wh + q] : 0u;
    }
    for (u32 k = threadIdx.x; k < (u32)D * PSLOTS; k += BDIM) p.pend[t * D * PSLOTS + k] = 0;
    if (folded) atomicAdd(s_folded, folded);
    if (threadIdx.x == 0) {
        p.tile_active[t] = 0;
        p.tile_mail[t] = 0;
        p.activity[t] = 0;
        p.tile_dirty[t] = 0;
        p.tile_dirty[p.ntiles + t] = 0;
    }
}

// ---------------------------------------------------------------------------------
// Global relabel: exact BFS distances to t over residual arcs, by tile fixpoints.

// Frontier relaxation of h(j) = min(h(j), h(i) + 1 over arcs j -> i inside the tile,
// starting from the pixels whose bit is set in fb[0] (their heights already lowered).
// Each iteration lets the frontier pixels lower their in-tile neighbours with atomicMin;
// those that improved form the next frontier. Rows without frontier pixels cost one
// shared load per warp. `arc(j, d)`: whether pixel j has a residual arc in direction d.
// The fixpoint is the same as Bellman-Ford's; returns the iterations.
template <int D, class Arc>
__device__ u32 frontier_fixpoint(u32* h, u32 (*fb)[FWORDS], Arc arc) {
    u32 iters = 0;
    for (u32 k = 0;; ++k) {
        u32* cur = fb[k % 3];
        u32* nxt = fb[(k + 1) % 3];
        u32* old = fb[(k + 2) % 3];
        u32 more = 0;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const u32 w = cur[i / 32];
            if (!((w >> (i % 32)) & 1u)) continue;
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            const u32 v = atomicOr(&h[(ly + 1) * HW + lx + 1], 0u) + 1u;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
                if (!inside_tile(nx, ny)) continue;
                const u32 j = (u32)(ny * TW + nx);
                if (!arc(j, d ^ 1)) continue;
                if (atomicMin(&h[(ny + 1) * HW + nx + 1], v) > v) {
                    atomicOr(&nxt[j / 32], 1u << (j % 32));
                    more = 1;
                }
            }
        }
        for (u32 w = threadIdx.x; w < FWORDS; w += BDIM) old[w] = 0;
        ++iters;
        if (!__syncthreads_or(more)) {
            for (u32 w = threadIdx.x; w < 3 * FWORDS; w += BDIM) fb[w / FWORDS][w % FWORDS] = 0;
            __syncthreads();
            return iters;
        }
    }
}

// One BFS round on tile t. Round 0 takes the tile's mail into its residual graph, builds
// the residual bits and starts from h = 1 at pixels with a t-link residual (INF
// elsewhere, halo ignored); later rounds continue from the stored heights, lowered where
// a halo neighbour now offers a shorter path. Marks the neighbour tiles dirty for the next
// round when the border changed (round 0: holds a finite height), and sets the tile's
// active flag.
template <int D>
__device__ void gr_tile(const Params& p, BfsSmem& s, u32 t, u32 round, u64* iters) {
    const u64 c0 = cycles();
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    for (u32 w = threadIdx.x; w < 3 * FWORDS; w += BDIM) s.fb[w / FWORDS][w % FWORDS] = 0;
    if (round == 0) {
        if (threadIdx.x == 0) {
            s.mail = take_mail(p, t);
            __threadfence();
        }
        __syncthreads();
        const u32 mail = s.mail;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            const int hi = (ly + 1) * HW + lx + 1;
            u64 e = p.exc[base + i];
            u32 bits = p.tres[base + i] ? BIT_SINK : 0u;
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
                if (r) bits |= 1u << d;
            }
            if (e) bits |= BIT_EXCESS;
            p.rmask[base + i] = (u16)bits;
            s.m[i] = bits;
            s.h[hi] = (bits & BIT_SINK) ? 1u : INF;
            s.h0[i] = INF;
            if (bits & BIT_SINK) atomicOr(&s.fb[0][i / 32], 1u << (i % 32));
        }
        for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
            int lx, ly;
            halo_coord(k, lx, ly);
            s.h[(ly + 1) * HW + lx + 1] = INF;
        }
    } else {
        __syncthreads();
        for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
            int lx, ly;
            halo_coord(k, lx, ly);
            s.h[(ly + 1) * HW + lx + 1] = halo_height(p, tx, ty, lx, ly);
        }
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
            const u32 v = p.h[base + i];
            s.h[hi] = v;
            s.h0[i] = v;
            s.m[i] = p.rmask[base + i];
        }
        __syncthreads();
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            if (!on_border(i)) continue;
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            const int hi = (ly + 1) * HW + lx + 1;
            const u32 v = s.h[hi];
            u32 m = v;
            for (int d = 0; d < D; ++d)
                if (!inside_tile(lx + dir_dx(d), ly + dir_dy(d)) && (s.m[i] >> d & 1u))
                    m = umin32(m, s.h[hi + dir_dy(d) * HW + dir_dx(d)] + 1u);
            if (m < v) {
                s.h[hi] = m;
                atomicOr(&s.fb[0][i / 32], 1u << (i % 32));
            }
        }
    }
    __syncthreads();
    const u32* mbits = s.m;
    *iters += frontier_fixpoint<D>(s.h, s.fb, [mbits](u32 j, int d) { return (mbits[j] >> d) & 1u; });
    u32 border = 0, active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 v = s.h[hi];
        if (v != s.h0[i] || round == 0) {
            st_relaxed(&p.h[base + i], v);
            if (v != s.h0[i] && on_border(i)) border = 1;
        }
        if ((s.m[i] & BIT_EXCESS) && v < INF) active = 1;
    }
    border = __syncthreads_or(border);
    active = __syncthreads_or(active);
    if (threadIdx.x == 0) {
        atomicAdd(&p.ctl->bfs_tiles, 1u);
        set_tile_active(p, t, active);
        atomicAdd(&p.ctl->cyc_bfs, cycles() - c0);
    }
    if (border && threadIdx.x == 0) {
        atomicAdd(&p.ctl->gr_changes, 1u);
        u32* next = p.tile_dirty + ((round + 1u) & 1u) * p.ntiles;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int nx = (int)tx + dx, ny = (int)ty + dy;
                if ((dx || dy) && nx >= 0 && ny >= 0 && nx < (int)p.tiles_x && ny < (int)p.tiles_y)
                    atomicOr(&next[ny * p.tiles_x + nx], 1u);
            }
    }
}

// ---------------------------------------------------------------------------------
// Discharge: tile-local push-relabel in shared memory.

template <int D>
__device__ void load_tile(const Params& p, TileSmem<D>& s, u32 t) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    if (threadIdx.x == 0) {
        s.sink = 0;
        s.relabels = 0;
        s.count = 0;
        s.mail = take_mail(p, t);
        __threadfence();
    }
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        s.exc[i] = p.exc[base + i];
        s.inflow[i] = 0;
        s.tres[i] = p.tres[base + i];
        s.h[(i / TW + 1) * HW + i % TW + 1] = p.h[base + i];
        for (int d = 0; d < D; ++d) s.res[d][i] = p.res[(size_t)d * p.npix + base + i];
    }
    for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
        int lx, ly;
        halo_coord(k, lx, ly);
        s.h[(ly + 1) * HW + lx + 1] = halo_height(p, tx, ty, lx, ly);
    }
    for (u32 k = threadIdx.x; k < (u32)D * PSLOTS; k += BDIM) s.bout[k / PSLOTS][k % PSLOTS] = 0;
    for (u32 w = threadIdx.x; w < 3 * FWORDS; w += BDIM) s.fb[w / FWORDS][w % FWORDS] = 0;
    __syncthreads();
    if (s.mail) {
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            if (!on_border(i)) continue;
            const int lx = (int)(i % TW), ly = (int)(i / TW);
            for (int d = 0; d < D; ++d) {
                if (inside_tile(lx + dir_dx(d), ly + dir_dy(d))) continue;
                const u32 f = take_pending<D>(p, tx, ty, lx, ly, d);
                if (f) {
                    s.exc[i] += f;
                    s.res[d][i] += f;
                }
            }
        }
        __syncthreads();
    }
}

// Region relabel: heights := BFS distance inside the tile to t or to a halo pixel (plus
// its halo height). Valid labels never exceed it, so heights only grow; pixels that
// reach neither become INF (they cannot reach t at all).
template <int D>
__device__ u32 region_relabel(const Params& p, TileSmem<D>& s) {
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        u32 m = s.tres[i] ? 1u : INF;
        if (on_border(i))
            for (int d = 0; d < D; ++d)
                if (!inside_tile(lx + dir_dx(d), ly + dir_dy(d)) && s.res[d][i])
                    m = umin32(m, s.h[hi + dir_dy(d) * HW + dir_dx(d)] + 1u);
        s.h[hi] = m;
        if (m < INF) atomicOr(&s.fb[0][i / 32], 1u << (i % 32));
    }
    __syncthreads();
    const u32 iters = frontier_fixpoint<D>(s.h, s.fb, [&s](u32 j, int d) { return s.res[d][j] != 0u; });
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 v = s.h[hi];
        if (v >= p.hmax && v != INF) s.h[hi] = INF;
    }
    __syncthreads();
    return iters;
}

// Push phase: every active pixel pushes min(excess, residual) along admissible arcs (to
// t at height 1, to neighbours one lower). In-tile receivers get the flow through shared
// atomics (their inflow and their reverse residual); a pixel only reads a residual after
// the height test, so it never reads one a neighbour is adding to (that neighbour would
// have to be lower and higher at once). Flow leaving the tile accumulates in `bout`.
template <int D>
__device__ void push_phase(TileSmem<D>& s, u64* sink) {
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        u64 e = s.exc[i];
        if (e == 0) continue;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        const u32 hu = s.h[hi];
        if (hu >= INF) continue;
        if (hu == 1) {
            const u32 r = s.tres[i];
            if (r) {
                const u32 a = (u32)umin64(e, r);
                s.tres[i] = r - a;
                e -= a;
                *sink += a;
            }
        }
#pragma unroll
        for (int d = 0; d < D; ++d) {
            if (e == 0) break;
            if (s.h[hi + dir_dy(d) * HW + dir_dx(d)] + 1u != hu) continue;
            const u32 r = s.res[d][i];
            if (r == 0) continue;
            const u32 a = (u32)umin64(e, r);
            s.res[d][i] = r - a;
            e -= a;
            const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
            if (inside_tile(nx, ny)) {
                const u32 j = (u32)(ny * TW + nx);
                atomicAdd(&s.inflow[j], (u64)a);
                atomicAdd(&s.res[d ^ 1][j], a);
            } else {
                s.bout[d][(nx < 0 || nx >= TW) ? ly : TW + lx] += a;
            }
        }
        s.exc[i] = e;
    }
}

// Relabel phase: pixels take their inflow; an active pixel with no admissible arc is
// queued for a relabel to one above its lowest residual neighbour (applied after the
// barrier, so every decision sees the same heights: Jacobi relabels keep labels valid). Returns whether an active pixel with
// a finite (new) height remains.
template <int D>
__device__ u32 relabel_phase(const Params& p, TileSmem<D>& s) {
    u32 active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        u64 e = s.exc[i];
        const u64 in = s.inflow[i];
        if (in) {
            s.inflow[i] = 0;
            e += in;
            s.exc[i] = e;
        }
        if (e == 0) continue;
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 hv = s.h[hi];
        if (hv >= INF) continue;
        u32 m = s.tres[i] ? 0u : INF;
#pragma unroll
        for (int d = 0; d < D; ++d)
            if (s.res[d][i]) m = umin32(m, s.h[hi + dir_dy(d) * HW + dir_dx(d)]);
        if (m + 1u == hv) {
            active = 1;  // an admissible arc is left
            continue;
        }
        // m + 1 > hv with valid labels; below only when stale halo heights of the
        // concurrent variant let a neighbour push uphill (then the label is repaired)
        const u32 hn = (m >= p.hmax - 1u) ? INF : m + 1u;
        const u32 k = atomicAdd(&s.count, 1u);
        s.list[k] = ((u64)hn << 10) | i;
        if (hn < INF) active = 1;
    }
    return active;
}

// Applies the queued relabels. Returns how many there were.
template <int D>
__device__ u32 apply_relabels(TileSmem<D>& s) {
    const u32 n = s.count;
    for (u32 k = threadIdx.x; k < n; k += BDIM) {
        const u64 e = s.list[k];
        const u32 i = (u32)(e & 1023u);
        s.h[(i / TW + 1) * HW + i % TW + 1] = (u32)(e >> 10);
    }
    __syncthreads();
    if (threadIdx.x == 0) s.count = 0;
    return n;
}

// Writes the tile back, leaves the flow pushed across the border in the tile's mailbox
// slots, tells the receiving tiles and updates the tile's active flag.
template <int D>
__device__ void store_tile(const Params& p, TileSmem<D>& s, u32 t, u32 active) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    if (threadIdx.x == 0) s.mail = 0;
    __syncthreads();
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        p.exc[base + i] = s.exc[i];
        p.tres[base + i] = s.tres[i];
        st_relaxed(&p.h[base + i], s.h[(i / TW + 1) * HW + i % TW + 1]);
        for (int d = 0; d < D; ++d) p.res[(size_t)d * p.npix + base + i] = s.res[d][i];
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
        atomicOr(&s.mail, 1u << (oy * 3 + ox));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (s.mail) __threadfence();
        for (int k = 0; k < 9; ++k)
            if (s.mail & (1u << k)) send_mail(p, (ty + (u32)(k / 3) - 1u) * p.tiles_x + tx + (u32)(k % 3) - 1u);
        set_tile_active(p, t, active);
        if (s.sink) atomicAdd(&p.ctl->sink_flow, s.sink);
        if (s.relabels) atomicAdd(&p.ctl->relabels, (u64)s.relabels);
    }
}

template <int D>
__device__ __forceinline__ u32 any_active(const TileSmem<D>& s) {
    u32 active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM)
        if (s.exc[i] && s.h[(i / TW + 1) * HW + i % TW + 1] < INF) active = 1;
    return __syncthreads_or(active);
}

// Discharges tile t (flagged active or mailed). `region_first`: run a region relabel
// before the first step (heights may be stale since the last global relabel).
template <int D>
__device__ void discharge_tile(const Params& p, TileSmem<D>& s, u32 t, bool region_first) {
    const u64 c0 = cycles();
    load_tile<D>(p, s, t);
    const bool mailed = s.mail != 0;
    u64 iters = 0, steps = 0;
    u32 active = any_active<D>(s);
    if (!active) region_first = false;
    if (region_first) {
        iters += region_relabel<D>(p, s);
        active = any_active<D>(s);
    }
    const bool worked = active || region_first || mailed;
    u64 sink = 0;
    u32 relabels = 0;
    while (active) {
        push_phase<D>(s, &sink);
        __syncthreads();
        active = relabel_phase<D>(p, s);
        active = __syncthreads_or(active);
        relabels += apply_relabels<D>(s);
        ++steps;
        if (!active || steps >= p.step_budget) break;
        if (p.region_every && steps % p.region_every == 0) {
            iters += region_relabel<D>(p, s);
            active = any_active<D>(s);
        }
    }
    if (threadIdx.x == 0) {
        s.relabels = relabels;
        if (steps) {
            p.activity[t] += 1;
            atomicAdd(&p.ctl->tile_visits, 1u);
            atomicAdd(&p.ctl->steps, steps);
        }
        if (iters) atomicAdd(&p.ctl->bfs_iters, iters);
    }
    if (sink) atomicAdd(&s.sink, sink);
    __syncthreads();
    if (worked)
        store_tile<D>(p, s, t, active);
    else if (threadIdx.x == 0)
        set_tile_active(p, t, 0u);
    if (threadIdx.x == 0) atomicAdd(&p.ctl->cyc_discharge, cycles() - c0);
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

// Whether tile t needs a discharge visit this round.
__device__ __forceinline__ bool wants_visit(const Params& p, u32 t, bool revisit) {
    return revisit || p.tile_active[t] || ld_relaxed(&p.tile_mail[t]);
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
    gr_tile<D>(p, s, t, round, &iters);
    if (threadIdx.x == 0) atomicAdd(&p.ctl->bfs_iters, iters);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_round4(const Params p, u32 round) { gr_round_entry<4>(p, round); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_round8(const Params p, u32 round) { gr_round_entry<8>(p, round); }

// Discharges the tiles [first, first + gridDim.x) of the colour-ordered tile list.
template <int D>
__device__ void discharge_entry(const Params& p, u32 first, u32 revisit, u32 region_first) {
    DYN_SMEM(smem);
    TileSmem<D>& s = *reinterpret_cast<TileSmem<D>*>(smem);
    const u32 t = p.colour_tiles[first + blockIdx.x];
    if (!wants_visit(p, t, revisit != 0)) return;
    discharge_tile<D>(p, s, t, region_first != 0);
}

extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_discharge4(const Params p, u32 first, u32 revisit, u32 region_first) {
    discharge_entry<4>(p, first, revisit, region_first);
}
extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_discharge8(const Params p, u32 first, u32 revisit, u32 region_first) {
    discharge_entry<8>(p, first, revisit, region_first);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_mask(const Params p) { mask_tile(p, blockIdx.x); }

// ---------------------------------------------------------------------------------
// Persistent cooperative solve: the whole schedule in one launch (after pr_init*).

// Claims the next work item of a pass: first blockIdx.x, then from the shared queue.
__device__ __forceinline__ u32 claim(const Params& p, u32 base, u32* s_claim) {
    __syncthreads();
    if (threadIdx.x == 0) *s_claim = p.nblocks + (atomicAdd(&p.ctl->queue, 1u) - base);
    __syncthreads();
    return *s_claim;
}

template <int D>
__device__ void solve_persistent(const Params& p) {
    DYN_SMEM(smem);
    __shared__ Snap snap;
    __shared__ u32 s_ok, s_claim;
    Ctl* c = p.ctl;
    const u32 nb = p.nblocks;
    BfsSmem& bs = *reinterpret_cast<BfsSmem*>(smem);
    TileSmem<D>& ts = *reinterpret_cast<TileSmem<D>*>(smem);
    if (threadIdx.x == 0) snap = Snap{};
    __syncthreads();

    u32 rounds = 0;
    u64 bfs_iters = 0;
    for (;;) {
        // 1. exact global relabel
        u32 prev_changes = snap.gr_changes;
        for (u32 r = 0;; ++r) {
            u32* dirty = p.tile_dirty + (r & 1u) * p.ntiles;
            const u32 base = snap.queue;
            for (u32 t = blockIdx.x; t < p.ntiles; t = claim(p, base, &s_claim)) {
                if (r > 0) {
                    if (!dirty[t]) continue;
                    __syncthreads();
                    if (threadIdx.x == 0) dirty[t] = 0;
                }
                gr_tile<D>(p, bs, t, r, &bfs_iters);
            }
            if (blockIdx.x == 0 && threadIdx.x == 0) c->bfs_rounds += 1;
            if (!grid_sync(c, nb, &snap, &s_ok)) return;
            if (snap.gr_changes == prev_changes) break;
            prev_changes = snap.gr_changes;
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) c->global_relabels += 1;
        if (snap.active_tiles == 0) break;  // optimal: no active pixel can reach t

        // 2. discharge rounds until the next global relabel is due
        const u64 work0 = snap.relabels;
        const u64 work_cap = (u64)p.npix * p.gr_work_num / 16u;
        for (u32 since = 0;;) {
            const bool revisit = p.revisit_every && rounds % p.revisit_every == p.revisit_every - 1;
            const u32 phases = p.concurrent ? 1u : p.ncolours;
            for (u32 phase = 0; phase < phases; ++phase) {
                const u32 first = p.concurrent ? 0u : p.colour_start[phase];
                const u32 count = p.concurrent ? p.ntiles : p.colour_start[phase + 1] - first;
                const u32 base = snap.queue;
                for (u32 k = blockIdx.x; k < count; k = claim(p, base, &s_claim)) {
                    const u32 t = p.colour_tiles[first + k];
                    if (!wants_visit(p, t, revisit)) continue;
                    discharge_tile<D>(p, ts, t, since > 0);
                }
                if (!grid_sync(c, nb, &snap, &s_ok)) return;
            }
            ++rounds;
            ++since;
            if (blockIdx.x == 0 && threadIdx.x == 0) c->rounds = rounds;
            if (rounds >= p.max_rounds) {
                if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_ROUND_CAP);
                return;
            }
            if (snap.active_tiles == 0 && snap.mail_tiles == 0) break;
            if (since >= p.gr_rounds) break;
            if (snap.relabels - work0 > work_cap) break;
        }
    }
    // 3. output
    for (u32 t = blockIdx.x; t < p.ntiles; t += nb) mask_tile(p, t);
    if (threadIdx.x == 0 && bfs_iters) atomicAdd(&c->bfs_iters, bfs_iters);
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_DONE);
}

extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_solve4(const Params p) { solve_persistent<4>(p); }
extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_solve8(const Params p) { solve_persistent<8>(p); }

// Sizes the host must agree with (checked once when the engine starts).
extern "C" __global__ void pr_layout(u32* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        out[0] = (u32)sizeof(Params);
        out[1] = (u32)sizeof(Ctl);
        out[2] = (u32)sizeof(TileSmem<4>);
        out[3] = (u32)sizeof(TileSmem<8>);
        out[4] = (u32)sizeof(BfsSmem);
    }
}
