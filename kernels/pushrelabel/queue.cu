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

