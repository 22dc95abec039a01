// Exact push-relabel max-flow on 2D grids (4- or 8-connected), CUDA Cuts style, tiled.
//
// Layout: the grid is padded to whole TW x TH tiles and every per-pixel array is stored
// tile by tile (tile t holds pixels [t*TP, (t+1)*TP), row-major inside the tile), so one
// tile is one contiguous, coalesced chunk. Per pixel: residual capacity towards each
// neighbour (u32; a neighbour pair's residuals sum to c_uv + c_vu < 2^32), residual
// capacity to the sink after folding the terminal arcs (u32), excess (u64) and height
// (u32, INF = cannot reach the sink).
//
// Schedule (one round = one pass per tile colour; tiles of one colour never touch):
//  * discharge pass: a block loads an active tile plus its one-pixel halo of heights into
//    shared memory and runs synchronous push / pull+relabel steps there (tile-local
//    discharge) until no pixel of the tile is active or a step budget is spent, with a
//    region relabel (BFS inside the tile from the sink and the frozen halo heights) at
//    the start of the visit and every few steps. Pushes across the tile border go
//    straight to the idle neighbour tile (atomic excess, its reverse residual) and mark
//    it active. Inactive tiles are skipped and revisited every K rounds.
//  * global relabel: exact BFS from the sink in the residual graph, computed as a
//    fixpoint of tile-local relaxations looped on the device (no host copy per level).
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
#define INF 0x7fffffffu
#define MAX_COLOURS 4

// Status codes written to Ctl::status.
#define ST_RUNNING 0u
#define ST_DONE 1u
#define ST_HANG 2u
#define ST_ROUND_CAP 3u

// Counters shared by all blocks. Totals only grow; decisions compare snapshots that the
// last block to reach a grid barrier copies (so every block decides the same).
struct Snap {
    u64 relabels;
    u32 active_tiles;
    u32 gr_changes;
    u32 queue;
    u32 pad;
};

struct Ctl {
    u64 sink_flow;     // flow delivered to t (includes the folded terminal flow)
    u64 relabels;      // local relabels, total
    u64 steps;         // tile push/relabel steps, total (cost measure)
    u64 bfs_iters;     // tile BFS iterations, total (cost measure)
    u32 active_tiles;  // number of tiles whose active flag is set (exact)
    u32 gr_changes;    // tiles whose border heights changed in BFS rounds, total
    u32 queue;         // tile claims, total
    u32 tile_visits;   // tiles discharged, total
    u32 rounds;        // discharge rounds
    u32 global_relabels;
    u32 bfs_rounds;
    u32 bfs_tiles;     // tiles relaxed in BFS rounds, total
    u32 status;
    u32 bar_count;
    u32 bar_gen;
    u32 pad0, pad1;
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
    u32 revisit_every;             // visit inactive tiles every K rounds (0: never)
    u32 gr_rounds;                 // global relabel after at most this many rounds
    u32 gr_work_num;               // ... or after relabels > npix * num / 16
    u32 max_rounds;                // safety cap on discharge rounds
    u32 nblocks;                   // blocks of a persistent launch
    u32 pad0, pad1;
    u32* res;            // D * npix residuals, res[d * npix + i]
    u32* tres;           // npix
    u64* exc;            // npix
    u32* h;              // npix
    u16* rmask;          // npix: bit d = res[d] > 0, bit 8 = tres > 0 (global relabel)
    u32* tile_active;    // ntiles
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
            c->snap.gr_changes = vc->gr_changes;
            c->snap.queue = vc->queue;
            __threadfence();
            st_release(&c->bar_gen, gen + 1);
        } else {
            const long long start = clock64();
            while (ld_acquire(&c->bar_gen) == gen) {
                __nanosleep(64);
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

template <int D>
struct TileSmem {
    u32 h[2][HP];  // heights with halo, double buffered (Jacobi relabels)
    u64 exc[TP];
    u32 res[D][TP];
    u32 tres[TP];
    u32 out[D][TP];  // flow pushed this step (in-tile) or this visit (across the border)
    u64 sink;        // flow pushed to t during the visit
    u32 relabels;
    u32 pad;
};

struct BfsSmem {
    u32 h[2][HP];
    u32 h0[TP];  // heights as loaded
    u32 m[TP];   // residual bits
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
    if (folded) atomicAdd(s_folded, folded);
    if (threadIdx.x == 0) {
        p.tile_active[t] = 0;
        p.activity[t] = 0;
        p.tile_dirty[t] = 0;
        p.tile_dirty[p.ntiles + t] = 0;
    }
}

// ---------------------------------------------------------------------------------
// Global relabel: exact BFS distances to t over residual arcs, by tile fixpoints.

template <int D>
__device__ void gr_init_tile(const Params& p, u32 t) {
    const u32 base = t * TP;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        u32 m = p.tres[base + i] ? 0x100u : 0u;
        for (int d = 0; d < D; ++d)
            if (p.res[(size_t)d * p.npix + base + i]) m |= 1u << d;
        p.rmask[base + i] = (u16)m;
        p.h[base + i] = (m & 0x100u) ? 1u : INF;
    }
    if (threadIdx.x == 0) {
        p.tile_dirty[t] = 1;
        p.tile_dirty[p.ntiles + t] = 0;
    }
}

template <int D, int d>
__device__ __forceinline__ u32 relax_dir(const u32* hb, int hi, u32 bits, u32 m) {
    if (bits & (1u << d)) m = umin32(m, hb[hi + Dir<d>::dy * HW + Dir<d>::dx] + 1u);
    return m;
}

template <int D>
__device__ __forceinline__ u32 relax_all(const u32* hb, int hi, u32 bits, u32 v) {
    u32 m = v;
    m = relax_dir<D, 0>(hb, hi, bits, m);
    m = relax_dir<D, 1>(hb, hi, bits, m);
    m = relax_dir<D, 2>(hb, hi, bits, m);
    m = relax_dir<D, 3>(hb, hi, bits, m);
    if (D == 8) {
        m = relax_dir<D, 4>(hb, hi, bits, m);
        m = relax_dir<D, 5>(hb, hi, bits, m);
        m = relax_dir<D, 6>(hb, hi, bits, m);
        m = relax_dir<D, 7>(hb, hi, bits, m);
    }
    return m;
}

// Jacobi iterations of h(u) = min(h(u), h(v) + 1 over residual u->v) inside the tile
// with the halo fixed, until nothing changes. Returns the buffer holding the fixpoint.
template <int D>
__device__ int tile_fixpoint(u32 (*h)[HP], const u32* bits_of, int cur, u64* iters) {
    for (;;) {
        u32 changed = 0;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
            const u32 v = h[cur][hi];
            const u32 m = v > 1 ? relax_all<D>(h[cur], hi, bits_of[i], v) : v;
            h[cur ^ 1][hi] = m;
            changed |= (m != v);
        }
        ++*iters;
        const int any = __syncthreads_or(changed);
        cur ^= 1;
        if (!any) return cur;
    }
}

// One BFS round on tile t. Marks the neighbour tiles dirty for the next round when a
// border height changed.
template <int D>
__device__ void gr_round_tile(const Params& p, BfsSmem& s, u32 t, u32 parity, u64* iters) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 v = p.h[base + i];
        s.h[0][hi] = v;
        s.h0[i] = v;
        s.m[i] = p.rmask[base + i];
    }
    for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
        int lx, ly;
        halo_coord(k, lx, ly);
        const u32 v = halo_height(p, tx, ty, lx, ly);
        const int hi = (ly + 1) * HW + lx + 1;
        s.h[0][hi] = v;
        s.h[1][hi] = v;
    }
    __syncthreads();
    const int cur = tile_fixpoint<D>(s.h, s.m, 0, iters);
    u32 border = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 v = s.h[cur][hi];
        if (v != s.h0[i]) {
            st_relaxed(&p.h[base + i], v);
            const u32 lx = i % TW, ly = i / TW;
            if (lx == 0 || ly == 0 || lx == TW - 1 || ly == TH - 1) border = 1;
        }
    }
    border = __syncthreads_or(border);
    if (threadIdx.x == 0) atomicAdd(&p.ctl->bfs_tiles, 1u);
    if (border && threadIdx.x == 0) {
        atomicAdd(&p.ctl->gr_changes, 1u);
        u32* next = p.tile_dirty + (parity ^ 1u) * p.ntiles;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int nx = (int)tx + dx, ny = (int)ty + dy;
                if ((dx || dy) && nx >= 0 && ny >= 0 && nx < (int)p.tiles_x && ny < (int)p.tiles_y)
                    atomicOr(&next[ny * p.tiles_x + nx], 1u);
            }
    }
}

// After a global relabel: exact active flags (a pixel with excess and finite height).
__device__ void finish_tile(const Params& p, u32 t) {
    const u32 base = t * TP;
    u32 active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM)
        if (p.exc[base + i] && p.h[base + i] < INF) active = 1;
    active = __syncthreads_or(active);
    if (threadIdx.x == 0) set_tile_active(p, t, active);
}

// ---------------------------------------------------------------------------------
// Discharge: tile-local push-relabel in shared memory.

template <int D>
__device__ void load_tile(const Params& p, TileSmem<D>& s, u32 t) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        s.exc[i] = p.exc[base + i];
        s.tres[i] = p.tres[base + i];
        const u32 v = p.h[base + i];
        s.h[0][hi] = v;
        s.h[1][hi] = v;
        for (int d = 0; d < D; ++d) {
            s.res[d][i] = p.res[(size_t)d * p.npix + base + i];
            s.out[d][i] = 0;
        }
    }
    for (u32 k = threadIdx.x; k < NHALO; k += BDIM) {
        int lx, ly;
        halo_coord(k, lx, ly);
        const u32 v = halo_height(p, tx, ty, lx, ly);
        const int hi = (ly + 1) * HW + lx + 1;
        s.h[0][hi] = v;
        s.h[1][hi] = v;
    }
    if (threadIdx.x == 0) {
        s.sink = 0;
        s.relabels = 0;
    }
    __syncthreads();
}

// Region relabel: heights := BFS distance inside the tile to t or to a halo pixel (plus
// its frozen height). Valid labels never exceed it, so heights only grow; pixels that
// reach neither become INF (they cannot reach t at all).
template <int D>
__device__ int region_relabel(const Params& p, TileSmem<D>& s, int cur, u64* iters) {
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        s.h[cur][hi] = s.tres[i] ? 1u : INF;
    }
    __syncthreads();
    for (;;) {
        u32 changed = 0;
        for (u32 i = threadIdx.x; i < TP; i += BDIM) {
            const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
            const u32 v = s.h[cur][hi];
            u32 m = v;
            if (v > 1) {
#pragma unroll
                for (int d = 0; d < D; ++d)
                    if (s.res[d][i]) m = umin32(m, s.h[cur][hi + dir_dy(d) * HW + dir_dx(d)] + 1u);
            }
            s.h[cur ^ 1][hi] = m;
            changed |= (m != v);
        }
        ++*iters;
        const int any = __syncthreads_or(changed);
        cur ^= 1;
        if (!any) break;
    }
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int hi = (int)((i / TW + 1) * HW + i % TW + 1);
        const u32 v = s.h[cur][hi];
        if (v >= p.hmax && v != INF) s.h[cur][hi] = INF;
    }
    __syncthreads();
    return cur;
}

// Push phase: every active pixel pushes min(excess, residual) along admissible arcs
// (to t when at height 1, to neighbours one lower). Returns whether anything moved.
template <int D>
__device__ u32 push_phase(TileSmem<D>& s, int cur, u64* sink) {
    u32 pushed = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        u64 e = s.exc[i];
        if (e == 0) continue;
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        const u32 hu = s.h[cur][hi];
        if (hu >= INF) continue;
        if (hu == 1) {
            const u32 r = s.tres[i];
            if (r) {
                const u32 a = (u32)umin64(e, r);
                s.tres[i] = r - a;
                e -= a;
                *sink += a;
                pushed = 1;
            }
        }
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const u32 r = s.res[d][i];
            if (e == 0 || r == 0) continue;
            const u32 hv = s.h[cur][hi + dir_dy(d) * HW + dir_dx(d)];
            if (hv + 1u != hu) continue;
            const u32 a = (u32)umin64(e, r);
            s.res[d][i] = r - a;
            e -= a;
            pushed = 1;
            if (inside_tile(lx + dir_dx(d), ly + dir_dy(d)))
                s.out[d][i] = a;
            else
                s.out[d][i] += a;
        }
        s.exc[i] = e;
    }
    return pushed;
}

// Pull phase: every pixel takes the flow its in-tile neighbours pushed to it (excess and
// reverse residual), then an active pixel with no admissible arc is relabelled to one
// above its lowest residual neighbour (Jacobi: new heights go to the other buffer).
// Returns whether the pixel loop saw an active pixel with a finite height afterwards.
template <int D>
__device__ u32 pull_relabel_phase(const Params& p, TileSmem<D>& s, int cur, u32* relabels) {
    u32 active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        u64 in = 0;
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
            if (!inside_tile(nx, ny)) continue;
            const u32 j = (u32)(ny * TW + nx);
            const u32 f = s.out[d ^ 1][j];
            if (f) {
                s.out[d ^ 1][j] = 0;
                s.res[d][i] += f;
                in += f;
            }
        }
        u64 e = s.exc[i];
        if (in) {
            e += in;
            s.exc[i] = e;
        }
        const u32 hv = s.h[cur][hi];
        u32 hn = hv;
        if (e && hv < INF) {
            u32 m = s.tres[i] ? 0u : INF;
#pragma unroll
            for (int d = 0; d < D; ++d)
                if (s.res[d][i]) m = umin32(m, s.h[cur][hi + dir_dy(d) * HW + dir_dx(d)]);
            if (m >= hv) {
                hn = (m >= p.hmax - 1u) ? INF : m + 1u;
                ++*relabels;
            }
            if (hn < INF) active = 1;
        }
        s.h[cur ^ 1][hi] = hn;
    }
    return active;
}

// Writes the tile back, hands the flow pushed across the border to the neighbour tiles
// and updates the activity flags. `active` = the tile still has active pixels.
template <int D>
__device__ void store_tile(const Params& p, TileSmem<D>& s, u32 t, int cur, u32 active) {
    const u32 tx = t % p.tiles_x, ty = t / p.tiles_x;
    const u32 base = t * TP;
    for (u32 i = threadIdx.x; i < TP; i += BDIM) {
        const int lx = (int)(i % TW), ly = (int)(i / TW);
        const int hi = (ly + 1) * HW + lx + 1;
        p.exc[base + i] = s.exc[i];
        p.tres[base + i] = s.tres[i];
        p.h[base + i] = s.h[cur][hi];
        for (int d = 0; d < D; ++d) p.res[(size_t)d * p.npix + base + i] = s.res[d][i];
        if (lx != 0 && ly != 0 && lx != TW - 1 && ly != TH - 1) continue;
        for (int d = 0; d < D; ++d) {
            const int nx = lx + dir_dx(d), ny = ly + dir_dy(d);
            if (inside_tile(nx, ny)) continue;
            const u32 f = s.out[d][i];
            if (!f) continue;
            // f > 0 means the arc had residual capacity, so the neighbour is a real pixel
            const u32 gx = (u32)((int)(tx * TW) + nx), gy = (u32)((int)(ty * TH) + ny);
            const u32 g = blocked_index(p, gx, gy);
            atomicAdd(&p.exc[g], (u64)f);
            p.res[(size_t)(d ^ 1) * p.npix + g] += f;
            set_tile_active(p, g / TP, 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        set_tile_active(p, t, active);
        if (s.sink) atomicAdd(&p.ctl->sink_flow, s.sink);
        if (s.relabels) atomicAdd(&p.ctl->relabels, (u64)s.relabels);
    }
}

// Discharges tile t (already known to be worth a visit). `region_first`: run a region
// relabel before the first step (heights may be stale since the last global relabel).
template <int D>
__device__ void discharge_tile(const Params& p, TileSmem<D>& s, u32 t, bool region_first) {
    load_tile<D>(p, s, t);
    u64 iters = 0, steps = 0;
    int cur = 0;
    u32 active = 0;
    for (u32 i = threadIdx.x; i < TP; i += BDIM)
        if (s.exc[i] && s.h[0][(i / TW + 1) * HW + i % TW + 1] < INF) active = 1;
    active = __syncthreads_or(active);
    if (!active) region_first = false;
    if (region_first) {
        cur = region_relabel<D>(p, s, cur, &iters);
        active = 0;
        for (u32 i = threadIdx.x; i < TP; i += BDIM)
            if (s.exc[i] && s.h[cur][(i / TW + 1) * HW + i % TW + 1] < INF) active = 1;
        active = __syncthreads_or(active);
    }
    const bool worked = active != 0 || region_first;
    u64 sink = 0;
    u32 relabels = 0;
    while (active) {
        push_phase<D>(s, cur, &sink);
        __syncthreads();
        active = pull_relabel_phase<D>(p, s, cur, &relabels);
        active = __syncthreads_or(active);
        cur ^= 1;
        ++steps;
        if (!active || steps >= p.step_budget) break;
        if (p.region_every && steps % p.region_every == 0) {
            cur = region_relabel<D>(p, s, cur, &iters);
            active = 0;
            for (u32 i = threadIdx.x; i < TP; i += BDIM)
                if (s.exc[i] && s.h[cur][(i / TW + 1) * HW + i % TW + 1] < INF) active = 1;
            active = __syncthreads_or(active);
        }
    }
    if (sink) atomicAdd(&s.sink, sink);
    if (relabels) atomicAdd(&s.relabels, relabels);
    __syncthreads();
    if (worked) {
        store_tile<D>(p, s, t, cur, active);
        if (threadIdx.x == 0) {
            p.activity[t] += 1;
            atomicAdd(&p.ctl->tile_visits, 1u);
            atomicAdd((u64*)&p.ctl->steps, steps);
        }
    } else if (threadIdx.x == 0) {
        set_tile_active(p, t, 0u);
    }
    if (threadIdx.x == 0 && iters) atomicAdd((u64*)&p.ctl->bfs_iters, iters);
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

extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_init4(const Params p) { gr_init_tile<4>(p, blockIdx.x); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_init8(const Params p) { gr_init_tile<8>(p, blockIdx.x); }

template <int D>
__device__ void gr_round_entry(const Params& p, u32 parity) {
    DYN_SMEM(smem);
    BfsSmem& s = *reinterpret_cast<BfsSmem*>(smem);
    const u32 t = blockIdx.x;
    u32* dirty = p.tile_dirty + parity * p.ntiles;
    if (!dirty[t]) return;
    __syncthreads();
    if (threadIdx.x == 0) dirty[t] = 0;
    u64 iters = 0;
    gr_round_tile<D>(p, s, t, parity, &iters);
    if (threadIdx.x == 0) atomicAdd((u64*)&p.ctl->bfs_iters, iters);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_round4(const Params p, u32 parity) { gr_round_entry<4>(p, parity); }
extern "C" __global__ void __launch_bounds__(BDIM) pr_gr_round8(const Params p, u32 parity) { gr_round_entry<8>(p, parity); }

extern "C" __global__ void __launch_bounds__(BDIM) pr_finish(const Params p) { finish_tile(p, blockIdx.x); }

template <int D>
__device__ void discharge_entry(const Params& p, u32 colour, u32 revisit, u32 region_first) {
    DYN_SMEM(smem);
    TileSmem<D>& s = *reinterpret_cast<TileSmem<D>*>(smem);
    const u32 t = p.colour_tiles[p.colour_start[colour] + blockIdx.x];
    if (!revisit && !p.tile_active[t]) return;
    discharge_tile<D>(p, s, t, region_first != 0);
}

extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_discharge4(const Params p, u32 colour, u32 revisit, u32 region_first) {
    discharge_entry<4>(p, colour, revisit, region_first);
}
extern "C" __global__ void __launch_bounds__(BDIM, 2) pr_discharge8(const Params p, u32 colour, u32 revisit, u32 region_first) {
    discharge_entry<8>(p, colour, revisit, region_first);
}

extern "C" __global__ void __launch_bounds__(BDIM) pr_mask(const Params p) { mask_tile(p, blockIdx.x); }

// ---------------------------------------------------------------------------------
// Persistent cooperative solve: the whole schedule in one launch (after pr_init*).

// Claims the k-th work item of a pass: first blockIdx.x, then from the shared queue.
__device__ __forceinline__ u32 claim(const Params& p, u32 k_static, u32 base, u32* s_claim, bool first) {
    if (first) return k_static;
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

    u32 rounds = 0;
    u64 bfs_iters = 0;
    for (;;) {
        // 1. exact global relabel
        for (u32 t = blockIdx.x; t < p.ntiles; t += nb) gr_init_tile<D>(p, t);
        if (!grid_sync(c, nb, &snap, &s_ok)) return;
        u32 prev_changes = snap.gr_changes;
        BfsSmem& bs = *reinterpret_cast<BfsSmem*>(smem);
        for (u32 r = 0;; ++r) {
            const u32 parity = r & 1u;
            u32* dirty = p.tile_dirty + parity * p.ntiles;
            const u32 base = snap.queue;
            for (u32 k = claim(p, blockIdx.x, base, &s_claim, true); k < p.ntiles;
                 k = claim(p, 0, base, &s_claim, false)) {
                const u32 t = k;
                if (!dirty[t]) continue;
                __syncthreads();
                if (threadIdx.x == 0) dirty[t] = 0;
                gr_round_tile<D>(p, bs, t, parity, &bfs_iters);
            }
            if (blockIdx.x == 0 && threadIdx.x == 0) c->bfs_rounds += 1;
            if (!grid_sync(c, nb, &snap, &s_ok)) return;
            if (snap.gr_changes == prev_changes) break;
            prev_changes = snap.gr_changes;
        }
        for (u32 t = blockIdx.x; t < p.ntiles; t += nb) finish_tile(p, t);
        if (blockIdx.x == 0 && threadIdx.x == 0) c->global_relabels += 1;
        if (!grid_sync(c, nb, &snap, &s_ok)) return;
        if (snap.active_tiles == 0) break;  // optimal: no active pixel can reach t

        // 2. discharge rounds until the next global relabel is due
        const u64 work0 = snap.relabels;
        const u64 work_cap = (u64)p.npix * p.gr_work_num / 16u;
        bool stop = false;
        for (u32 since = 0;;) {
            const bool revisit = p.revisit_every && rounds % p.revisit_every == p.revisit_every - 1;
            for (u32 colour = 0; colour < p.ncolours; ++colour) {
                const u32 count = p.colour_start[colour + 1] - p.colour_start[colour];
                const u32 base = snap.queue;
                TileSmem<D>& ts = *reinterpret_cast<TileSmem<D>*>(smem);
                for (u32 k = claim(p, blockIdx.x, base, &s_claim, true); k < count;
                     k = claim(p, 0, base, &s_claim, false)) {
                    const u32 t = p.colour_tiles[p.colour_start[colour] + k];
                    if (!revisit && !p.tile_active[t]) continue;
                    discharge_tile<D>(p, ts, t, since > 0);
                }
                if (!grid_sync(c, nb, &snap, &s_ok)) return;
            }
            ++rounds;
            ++since;
            if (blockIdx.x == 0 && threadIdx.x == 0) c->rounds = rounds;
            if (rounds >= p.max_rounds) {
                if (blockIdx.x == 0 && threadIdx.x == 0) atomicExch(&c->status, ST_ROUND_CAP);
                stop = true;
                break;
            }
            if (snap.active_tiles == 0) break;
            if (since >= p.gr_rounds) break;
            if (snap.relabels - work0 > work_cap) break;
        }
        if (stop) return;
    }
    // 3. output
    for (u32 t = blockIdx.x; t < p.ntiles; t += nb) mask_tile(p, t);
    if (threadIdx.x == 0 && bfs_iters) atomicAdd((u64*)&c->bfs_iters, bfs_iters);
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
