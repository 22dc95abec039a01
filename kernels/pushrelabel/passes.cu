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

