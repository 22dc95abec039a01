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

