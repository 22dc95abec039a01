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

