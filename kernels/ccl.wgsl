// Connected-component labelling by label propagation, the algorithm of kernels/ccl.cu
// in WGSL for any GPU: every pixel ends with the smallest row-major index of its
// component (the canonical labelling the CPU labeller gives). Pixels p, q are connected
// when they are neighbours (4- or 8-connected) with equal values.
//
// 1. ccl_local: each 32x8 workgroup labels its own pixels in workgroup memory, iterated
//    until its tile is stable, so that every label names a pixel of the same component.
// 2. ccl_links_init / ccl_links_jump: per direction, the furthest pixel reachable in a
//    straight line through connected pixels, by pointer jumping.
// 3. ccl_propagate: the minimum of the own label, the neighbours' and the links' ends,
//    then the label of the pixel that minimum names ("master"). Double-buffered; each
//    sweep sets `changed` where a label moved, and the host copies that flag out.
//
// Values are bytes, four to a word (WGSL has no byte arrays).

const TILE_W: u32 = 32u;
const TILE_H: u32 = 8u;
const NONE: u32 = 0xffffffffu;

struct Params {
    width: u32,
    height: u32,
    dirs: u32,
    pixels: u32,
}

// Direction offsets in the order of the Rust `Direction::ALL`: E, W, S, N, SE, NW, SW, NE.
const DX = array<i32, 8>(1, -1, 0, 0, 1, -1, -1, 1);
const DY = array<i32, 8>(0, 0, 1, -1, 1, -1, 1, -1);

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> labels: array<u32>;
@group(0) @binding(3) var<storage, read> links_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> links_out: array<u32>;
@group(0) @binding(5) var<storage, read> labels_in: array<u32>;
@group(0) @binding(6) var<storage, read_write> changed: atomic<u32>;

fn value(p: u32) -> u32 {
    return (values[p >> 2u] >> ((p & 3u) * 8u)) & 0xffu;
}

fn inside(x: i32, y: i32) -> bool {
    return x >= 0 && y >= 0 && x < i32(params.width) && y < i32(params.height);
}

var<workgroup> s_val: array<u32, 256>;
var<workgroup> s_lab: array<u32, 256>;
var<workgroup> s_moved: atomic<u32>;
var<workgroup> s_any: u32;

@compute @workgroup_size(32, 8)
fn ccl_local(@builtin(workgroup_id) group: vec3<u32>,
             @builtin(local_invocation_id) local: vec3<u32>) {
    let tx = i32(local.x);
    let ty = i32(local.y);
    let x = i32(group.x * TILE_W) + tx;
    let y = i32(group.y * TILE_H) + ty;
    let me = local.y * TILE_W + local.x;
    let in_grid = inside(x, y);
    var lab = NONE;
    var v = 0u;
    if in_grid {
        lab = u32(y) * params.width + u32(x);
        v = value(lab);
    }
    s_val[me] = v;
    s_lab[me] = lab;
    loop {
        workgroupBarrier();
        var best = lab;
        if in_grid {
            for (var d = 0u; d < params.dirs; d++) {
                let nx = tx + DX[d];
                let ny = ty + DY[d];
                if nx < 0 || ny < 0 || nx >= i32(TILE_W) || ny >= i32(TILE_H) {
                    continue;
                }
                if !inside(x + DX[d], y + DY[d]) {
                    continue;
                }
                let n = u32(ny) * TILE_W + u32(nx);
                if s_val[n] == v {
                    best = min(best, s_lab[n]);
                }
            }
        }
        workgroupBarrier();
        if best < lab {
            atomicStore(&s_moved, 1u);
        }
        lab = best;
        s_lab[me] = lab;
        workgroupBarrier();
        if me == 0u {
            s_any = atomicExchange(&s_moved, 0u);
        }
        if workgroupUniformLoad(&s_any) == 0u {
            break;
        }
    }
    if in_grid {
        labels[u32(y) * params.width + u32(x)] = lab;
    }
}

// One invocation per pixel, 2D dispatches of 32x8 workgroups.
fn pixel(id: vec3<u32>) -> vec2<i32> {
    return vec2<i32>(i32(id.x), i32(id.y));
}

@compute @workgroup_size(32, 8)
fn ccl_links_init(@builtin(global_invocation_id) id: vec3<u32>) {
    let at = pixel(id);
    if !inside(at.x, at.y) {
        return;
    }
    let p = u32(at.y) * params.width + u32(at.x);
    let v = value(p);
    for (var d = 0u; d < params.dirs; d++) {
        let nx = at.x + DX[d];
        let ny = at.y + DY[d];
        var reach = p;
        if inside(nx, ny) {
            let q = u32(ny) * params.width + u32(nx);
            if value(q) == v {
                reach = q;
            }
        }
        links_out[d * params.pixels + p] = reach;
    }
}

@compute @workgroup_size(32, 8)
fn ccl_links_jump(@builtin(global_invocation_id) id: vec3<u32>) {
    let at = pixel(id);
    if !inside(at.x, at.y) {
        return;
    }
    let p = u32(at.y) * params.width + u32(at.x);
    for (var d = 0u; d < params.dirs; d++) {
        let base = d * params.pixels;
        links_out[base + p] = links_in[base + links_in[base + p]];
    }
}

@compute @workgroup_size(32, 8)
fn ccl_propagate(@builtin(global_invocation_id) id: vec3<u32>) {
    let at = pixel(id);
    if !inside(at.x, at.y) {
        return;
    }
    let p = u32(at.y) * params.width + u32(at.x);
    let v = value(p);
    let old = labels_in[p];
    var lab = old;
    for (var d = 0u; d < params.dirs; d++) {
        let nx = at.x + DX[d];
        let ny = at.y + DY[d];
        if inside(nx, ny) {
            let q = u32(ny) * params.width + u32(nx);
            if value(q) == v {
                lab = min(lab, labels_in[q]);
            }
        }
        lab = min(lab, labels_in[links_in[d * params.pixels + p]]);
    }
    // the pixel our label names belongs to our component, and its label is never
    // larger than its own index: adopt it
    lab = min(lab, labels_in[lab]);
    labels[p] = lab;
    if lab != old {
        atomicStore(&changed, 1u);
    }
}
