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

