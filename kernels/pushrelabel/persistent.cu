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
