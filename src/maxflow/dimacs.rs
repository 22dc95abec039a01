//! DIMACS max-flow files in the grid dialect (`c grid W H C` first line, or
//! `c grid W H D C` for a volume; see the data's FORMAT.md), plain or gzip, read fast
//! and checked line by line. A reader asked for one dimension refuses the other at the
//! first line ([`DimacsError::Dimension`]); [`read_instance_path`] takes either.
//!
//! Reading streams the file: a second thread inflates gzip while this one parses, and
//! memory follows what the file holds, not what its header claims. A grid larger than
//! [`SMALL_GRID_BYTES`] must declare at least one arc per [`PIXELS_PER_ARC`] pixels;
//! the arrays grow only as far as the arcs read so far justify (arcs further out wait
//! in a list until the end); and the full arrays are made only once every declared
//! arc has been read.

use crate::grid::{Connectivity, Direction, GridProblem, VolumeConnectivity, VolumeProblem};
use crossbeam_channel::{Receiver, bounded};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use thiserror::Error;

/// Largest memory (bytes) the parsed arrays of one grid may need; a header asking
/// for more is refused before anything is allocated.
pub const MAX_GRID_BYTES: u64 = 4 << 30;

/// Grid arrays up to this size (bytes) are allocated whatever the file holds.
pub const SMALL_GRID_BYTES: u64 = 64 << 20;

/// Larger grids need one declared arc per this many pixels: real instances list
/// several arcs per pixel, while a header that asks for a huge grid and lists next to
/// nothing would make a few bytes of input cost gigabytes.
pub const PIXELS_PER_ARC: u64 = 64;

const CHUNK: usize = 1 << 20;
const MAX_CAP: u64 = i32::MAX as u64;

/// What is wrong with a DIMACS file; `line` is 1-based where one line is at fault.
#[derive(Debug, Error)]
pub enum DimacsError {
    /// The file could not be opened or read (also a truncated or corrupt gzip stream).
    #[error("{0}")]
    Io(String),
    /// A line breaks the grid dialect.
    #[error("{line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: u64,
        /// What is wrong, for people.
        message: String,
    },
    /// Something missing or inconsistent that no single line is to blame for.
    #[error("{0}")]
    Content(String),
    /// The first line declares a grid of the other dimension than the one asked for:
    /// a 2D file is never read as a volume, nor a volume as a 2D grid.
    #[error("the file holds a {found} grid ('{}'), but a {expected} grid was asked for", found.header())]
    Dimension {
        /// What the file's first line declares.
        found: Dims,
        /// What the caller asked for.
        expected: Dims,
    },
}

/// The dimension of a grid file, as its first line declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dims {
    /// `c grid W H C`: a W×H image grid.
    Two,
    /// `c grid W H D C`: a W×H×D volume.
    Three,
}

impl Dims {
    /// The first line of a file of this dimension, for messages.
    fn header(self) -> &'static str {
        match self {
            Dims::Two => "c grid W H C",
            Dims::Three => "c grid W H D C",
        }
    }
}

impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Dims::Two => "2D",
            Dims::Three => "3D",
        })
    }
}

/// A grid instance of either dimension, as [`read_instance_path`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Instance {
    /// A 2D grid (`c grid W H C`).
    Plane(GridProblem),
    /// A volume (`c grid W H D C`).
    Volume(VolumeProblem),
}

fn syntax(line: u64, message: impl Into<String>) -> DimacsError {
    DimacsError::Syntax {
        line,
        message: message.into(),
    }
}

/// Reads a 2D grid instance from a file, gzip-compressed or not (told by its content).
pub fn read_path(path: &Path) -> Result<GridProblem, DimacsError> {
    plane(read_instance_path_as(path, Some(Dims::Two))?)
}

/// Reads a 2D grid instance from DIMACS text, gzip-compressed or not (told by its
/// first two bytes).
pub fn read_any<R: Read + Send + 'static>(reader: R) -> Result<GridProblem, DimacsError> {
    plane(read_instance_any(reader, Some(Dims::Two))?)
}

/// Reads a 2D grid instance from uncompressed DIMACS text.
pub fn read<R: Read + Send + 'static>(reader: R) -> Result<GridProblem, DimacsError> {
    plane(read_instance(reader, Some(Dims::Two))?)
}

/// Reads a volume (3D grid instance) from a file, gzip-compressed or not.
pub fn read_volume_path(path: &Path) -> Result<VolumeProblem, DimacsError> {
    volume(read_instance_path_as(path, Some(Dims::Three))?)
}

/// Reads a volume from DIMACS text, gzip-compressed or not.
pub fn read_volume_any<R: Read + Send + 'static>(reader: R) -> Result<VolumeProblem, DimacsError> {
    volume(read_instance_any(reader, Some(Dims::Three))?)
}

/// Reads a grid instance of either dimension from a file, gzip-compressed or not.
pub fn read_instance_path(path: &Path) -> Result<Instance, DimacsError> {
    read_instance_path_as(path, None)
}

fn read_instance_path_as(path: &Path, want: Option<Dims>) -> Result<Instance, DimacsError> {
    let file = File::open(path).map_err(|e| DimacsError::Io(format!("cannot open: {e}")))?;
    read_instance_any(file, want)
}

/// Reads a grid instance from DIMACS text, gzip-compressed or not (told by its first
/// two bytes), of the dimension `want` (either where `None`).
pub fn read_instance_any<R: Read + Send + 'static>(
    mut reader: R,
    want: Option<Dims>,
) -> Result<Instance, DimacsError> {
    let mut magic = [0u8; 2];
    let got = read_full(&mut reader, &mut magic).map_err(|e| DimacsError::Io(e.to_string()))?;
    let head = magic[..got].to_vec();
    let gzip = head == [0x1f, 0x8b];
    let chained = io::Cursor::new(head).chain(reader);
    if gzip {
        read_instance(flate2::read::MultiGzDecoder::new(chained), want)
    } else {
        read_instance(chained, want)
    }
}

fn plane(instance: Instance) -> Result<GridProblem, DimacsError> {
    match instance {
        Instance::Plane(p) => Ok(p),
        Instance::Volume(_) => Err(DimacsError::Dimension {
            found: Dims::Three,
            expected: Dims::Two,
        }),
    }
}

fn volume(instance: Instance) -> Result<VolumeProblem, DimacsError> {
    match instance {
        Instance::Volume(v) => Ok(v),
        Instance::Plane(_) => Err(DimacsError::Dimension {
            found: Dims::Two,
            expected: Dims::Three,
        }),
    }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Reads a grid instance of the dimension `want` (either where `None`) from
/// uncompressed DIMACS text. The reader runs on a helper thread so that decompression
/// overlaps parsing.
pub fn read_instance<R: Read + Send + 'static>(
    reader: R,
    want: Option<Dims>,
) -> Result<Instance, DimacsError> {
    let chunked = ChunkReader::spawn(reader);
    let (chunks, recycle) = (chunked.chunks(), &chunked.recycle);
    let mut parser = Parser {
        want,
        ..Parser::default()
    };
    let mut carry: Vec<u8> = Vec::new();
    for chunk in chunks.iter() {
        let chunk = chunk.map_err(|e| io_error(e, parser.line))?;
        let mut rest: &[u8] = &chunk;
        if !carry.is_empty() {
            let Some(nl) = memchr::memchr(b'\n', rest) else {
                carry.extend_from_slice(rest);
                let _ = recycle.try_send(chunk);
                continue;
            };
            carry.extend_from_slice(&rest[..nl]);
            parser.line(&carry)?;
            carry.clear();
            rest = &rest[nl + 1..];
        }
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            parser.line(&rest[..nl])?;
            rest = &rest[nl + 1..];
        }
        carry.extend_from_slice(rest);
        let _ = recycle.try_send(chunk);
    }
    if !carry.is_empty() {
        parser.line(&carry)?;
    }
    parser.finish()
}

fn io_error(e: io::Error, line: u64) -> DimacsError {
    let what = match e.kind() {
        io::ErrorKind::UnexpectedEof => "truncated compressed stream".to_string(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
            format!("corrupt compressed stream ({e})")
        }
        _ => format!("read failed ({e})"),
    };
    DimacsError::Io(format!("{what} after line {line}"))
}

/// A reader on its own thread, handing out 1 MiB chunks; spent chunks come back
/// through `recycle` so buffers are reused. Dropping it (on every return of [`read`],
/// an error part-way included) stops the thread and waits for it, so no reader thread
/// outlives the call that read.
struct ChunkReader {
    chunks: Option<Receiver<io::Result<Vec<u8>>>>,
    recycle: crossbeam_channel::Sender<Vec<u8>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ChunkReader {
    fn spawn<R: Read + Send + 'static>(reader: R) -> Self {
        let (tx, rx) = bounded::<io::Result<Vec<u8>>>(4);
        let (recycle_tx, recycle_rx) = bounded::<Vec<u8>>(4);
        let thread = std::thread::spawn(move || read_chunks(reader, &tx, &recycle_rx));
        Self {
            chunks: Some(rx),
            recycle: recycle_tx,
            thread: Some(thread),
        }
    }

    fn chunks(&self) -> &Receiver<io::Result<Vec<u8>>> {
        self.chunks.as_ref().expect("chunks until dropped")
    }
}

impl Drop for ChunkReader {
    fn drop(&mut self) {
        // a thread blocked on a full channel sees it closed and ends
        self.chunks = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The reader thread's loop: chunks until the end, an error, or no one listening.
fn read_chunks<R: Read>(
    mut reader: R,
    tx: &crossbeam_channel::Sender<io::Result<Vec<u8>>>,
    recycle_rx: &Receiver<Vec<u8>>,
) {
    loop {
        let mut buf = recycle_rx.try_recv().unwrap_or_default();
        buf.resize(CHUNK, 0);
        match read_full(&mut reader, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                buf.truncate(n);
                if tx.send(Ok(buf)).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Err(e));
                break;
            }
        }
    }
}

/// A grid's dimension and neighbourhood, as its first line declares them.
#[derive(Clone, Copy, Debug)]
enum Hood {
    Plane(Connectivity),
    Volume(VolumeConnectivity),
}

impl Hood {
    /// Arcs per pixel.
    fn arcs(self) -> u32 {
        match self {
            Hood::Plane(c) => c.number(),
            Hood::Volume(c) => c.number(),
        }
    }

    fn dims(self) -> Dims {
        match self {
            Hood::Plane(_) => Dims::Two,
            Hood::Volume(_) => Dims::Three,
        }
    }
}

/// The header facts: grid size (depth 1 for 2D) and neighbourhood.
#[derive(Clone, Copy, Debug)]
struct Header {
    width: u32,
    height: u32,
    depth: u32,
    hood: Hood,
    pixels: u64,
}

impl Header {
    /// Bytes of the grid's arrays.
    fn bytes(&self) -> u64 {
        self.pixels * (2 + self.hood.arcs() as u64) * 4
    }

    /// "W*H" or "W*H*D": the pixel count's formula, for messages.
    fn product(&self) -> &'static str {
        match self.hood {
            Hood::Plane(_) => "W*H",
            Hood::Volume(_) => "W*H*D",
        }
    }

    /// "W×H" or "W×H×D", for messages.
    fn size(&self) -> String {
        match self.hood {
            Hood::Plane(_) => format!("{}x{}", self.width, self.height),
            Hood::Volume(_) => format!("{}x{}x{}", self.width, self.height, self.depth),
        }
    }

    /// Pixels the arrays may cover once `arcs` arcs were read.
    fn reach(&self, arcs: u64) -> u64 {
        let small = SMALL_GRID_BYTES / (self.bytes() / self.pixels);
        small
            .max(arcs.saturating_mul(PIXELS_PER_ARC))
            .min(self.pixels)
    }
}

/// One arc of the file as it adds to the arrays; an arc beyond the arrays' reach when
/// it is read waits in a list until the end.
#[derive(Clone, Copy, Debug)]
struct GridArc {
    /// 0 source, 1 sink, 2 + direction index.
    array: u8,
    index: u64,
    cap: u64,
    line: u64,
    u: u64,
    v: u64,
}

/// Line-by-line state of a read.
#[derive(Default)]
struct Parser {
    /// The dimension asked for (either where `None`).
    want: Option<Dims>,
    line: u64,
    header: Option<Header>,
    declared_arcs: Option<u64>,
    arcs: u64,
    source_line: Option<u64>,
    sink_line: Option<u64>,
    source: Vec<i32>,
    sink: Vec<i32>,
    edges: Vec<Vec<i32>>,
    deferred: Vec<GridArc>,
}

impl Parser {
    fn line(&mut self, raw: &[u8]) -> Result<(), DimacsError> {
        self.line += 1;
        let text = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Some(header) = self.header else {
            return self.grid_line(text);
        };
        let mut tokens = Tokens::new(text, self.line);
        let Some(kind) = tokens.next_word() else {
            return Ok(()); // blank line
        };
        match kind {
            b"a" => self.arc(header, &mut tokens),
            b"c" => Ok(()),
            b"p" => self.problem_line(header, &mut tokens),
            b"n" => self.node_line(header, &mut tokens),
            other => Err(syntax(
                self.line,
                format!("unknown line type '{}'", String::from_utf8_lossy(other)),
            )),
        }
    }

    fn grid_line(&mut self, text: &[u8]) -> Result<(), DimacsError> {
        let header = parse_grid_line(text)?;
        if let Some(expected) = self.want.filter(|&w| w != header.hood.dims()) {
            return Err(DimacsError::Dimension {
                found: header.hood.dims(),
                expected,
            });
        }
        let bytes = header.bytes();
        if bytes > MAX_GRID_BYTES {
            return Err(syntax(
                1,
                format!(
                    "grid {} would need {:.1} GiB, more than the {} GiB limit",
                    header.size(),
                    bytes as f64 / (1u64 << 30) as f64,
                    MAX_GRID_BYTES >> 30
                ),
            ));
        }
        self.header = Some(header);
        self.edges = vec![Vec::new(); header.hood.arcs() as usize];
        Ok(())
    }

    fn problem_line(&mut self, header: Header, tokens: &mut Tokens) -> Result<(), DimacsError> {
        if self.declared_arcs.is_some() {
            return Err(syntax(self.line, "second 'p' line"));
        }
        if tokens.next_word() != Some(b"max") {
            return Err(syntax(self.line, "expected 'p max N M'"));
        }
        let nodes = tokens.number("node count")?;
        let arcs = tokens.number("arc count")?;
        tokens.end()?;
        if nodes != header.pixels + 2 {
            return Err(syntax(
                self.line,
                format!(
                    "node count {nodes} does not match the grid: expected {}+2 = {}",
                    header.product(),
                    header.pixels + 2
                ),
            ));
        }
        if header.bytes() > SMALL_GRID_BYTES && header.reach(arcs) < header.pixels {
            return Err(syntax(
                self.line,
                format!(
                    "{arcs} arcs are too few for a {} grid: grids over {} MiB need at least one arc per {PIXELS_PER_ARC} pixels",
                    header.size(),
                    SMALL_GRID_BYTES >> 20
                ),
            ));
        }
        self.declared_arcs = Some(arcs);
        Ok(())
    }

    fn node_line(&mut self, header: Header, tokens: &mut Tokens) -> Result<(), DimacsError> {
        self.require_p()?;
        let id = tokens.number("node id")?;
        let role = tokens.next_word();
        tokens.end()?;
        let (expected, slot, name) = match role {
            Some(b"s") => (header.pixels + 1, &mut self.source_line, "source"),
            Some(b"t") => (header.pixels + 2, &mut self.sink_line, "sink"),
            _ => return Err(syntax(self.line, "expected 'n ID s' or 'n ID t'")),
        };
        if slot.is_some() {
            return Err(syntax(self.line, format!("second {name} line")));
        }
        if id != expected {
            let other = if name == "source" {
                header.pixels + 2
            } else {
                header.pixels + 1
            };
            let msg = if id == other {
                format!(
                    "source and sink must be different nodes: the grid dialect has s = {0}+1, t = {0}+2",
                    header.product()
                )
            } else {
                format!(
                    "the {name} must be node {expected} ({}+{}), not {id}",
                    header.product(),
                    expected - header.pixels
                )
            };
            return Err(syntax(self.line, msg));
        }
        *slot = Some(self.line);
        Ok(())
    }

    fn require_p(&self) -> Result<(), DimacsError> {
        if self.declared_arcs.is_none() {
            return Err(syntax(
                self.line,
                "expected the 'p max N M' line before this one",
            ));
        }
        Ok(())
    }

    fn arc(&mut self, header: Header, tokens: &mut Tokens) -> Result<(), DimacsError> {
        self.require_p()?;
        let u = tokens.number("tail node")?;
        let v = tokens.number("head node")?;
        let cap = tokens.capacity()?;
        tokens.end()?;
        self.arcs += 1;
        let n = header.pixels;
        let (s, t) = (n + 1, n + 2);
        for id in [u, v] {
            if id == 0 || id > t {
                return Err(syntax(
                    self.line,
                    format!("node id {id} out of range 1..{t}"),
                ));
            }
        }
        let line = self.line;
        let reach = header.reach(self.arcs);
        let mut arc = GridArc {
            array: 0,
            index: 0,
            cap,
            line,
            u,
            v,
        };
        if u == s && v <= n {
            arc.index = v - 1;
            return self.add(arc, reach);
        }
        if v == t && u <= n {
            (arc.array, arc.index) = (1, u - 1);
            return self.add(arc, reach);
        }
        if u > n || v > n {
            let what = match (u, v) {
                (_, x) if x == s => "an arc into the source",
                (x, _) if x == t => "an arc out of the sink",
                _ => "an arc from the source to the sink",
            };
            return Err(syntax(
                line,
                format!("{what} ({u} -> {v}) is not a grid arc"),
            ));
        }
        let dir = match header.hood {
            Hood::Plane(c) => plane_direction(header.width, c, u, v),
            Hood::Volume(c) => volume_direction(&header, c, u, v),
        }
        .map_err(|what| syntax(line, format!("arc {u} -> {v} is not a grid arc: {what}")))?;
        (arc.array, arc.index) = (2 + dir as u8, u - 1);
        self.add(arc, reach)
    }

    /// The array an arc adds to.
    fn array(&mut self, array: u8) -> &mut Vec<i32> {
        match array {
            0 => &mut self.source,
            1 => &mut self.sink,
            d => &mut self.edges[d as usize - 2],
        }
    }

    /// Adds an arc's capacity, or defers it when its pixel is beyond `reach`.
    fn add(&mut self, arc: GridArc, reach: u64) -> Result<(), DimacsError> {
        if arc.index >= reach {
            self.deferred.push(arc);
            return Ok(());
        }
        let slot = grow(self.array(arc.array), arc.index, reach);
        add(slot, arc.cap, arc.line, arc.u, arc.v)
    }

    fn finish(mut self) -> Result<Instance, DimacsError> {
        let Some(header) = self.header else {
            return Err(DimacsError::Content(
                "empty file: expected 'c grid W H C' as the first line".into(),
            ));
        };
        let Some(declared) = self.declared_arcs else {
            return Err(DimacsError::Content("no 'p max N M' line".into()));
        };
        if self.source_line.is_none() || self.sink_line.is_none() {
            return Err(DimacsError::Content(
                "missing 'n ID s' or 'n ID t' line".into(),
            ));
        }
        if self.arcs != declared {
            return Err(DimacsError::Content(format!(
                "the 'p' line declares {declared} arcs but the file has {} (truncated file?)",
                self.arcs
            )));
        }
        let n = header.pixels as usize;
        self.source.resize(n, 0);
        self.sink.resize(n, 0);
        for e in &mut self.edges {
            e.resize(n, 0);
        }
        for arc in std::mem::take(&mut self.deferred) {
            self.add(arc, header.pixels)?;
        }
        let content = |e: &dyn std::fmt::Display| DimacsError::Content(e.to_string());
        match header.hood {
            Hood::Plane(c) => GridProblem::from_arrays(
                header.width,
                header.height,
                c,
                self.source,
                self.sink,
                self.edges,
            )
            .map(Instance::Plane)
            .map_err(|e| content(&e)),
            Hood::Volume(c) => VolumeProblem::from_arrays(
                (header.width, header.height, header.depth),
                c,
                self.source,
                self.sink,
                self.edges,
            )
            .map(Instance::Volume)
            .map_err(|e| content(&e)),
        }
    }
}

/// Parses the first line: `c grid W H C` (2D, C = 4 or 8) or `c grid W H D C` (3D,
/// C = 6, 10 or 26), with the size checked against the engines' 32-bit indices.
fn parse_grid_line(text: &[u8]) -> Result<Header, DimacsError> {
    let bad = || {
        syntax(
            1,
            "the first line must be 'c grid W H C' (2D, C = 4 or 8) or 'c grid W H D C' (3D, C = 6, 10 or 26)",
        )
    };
    let mut tokens = Tokens::new(text, 1);
    if tokens.next_word() != Some(b"c") || tokens.next_word() != Some(b"grid") {
        return Err(bad());
    }
    let mut numbers = Vec::with_capacity(4);
    while let Some(word) = tokens.next_word() {
        if numbers.len() == 4 {
            return Err(bad());
        }
        numbers.push(parse_u64(word).ok_or_else(|| {
            syntax(
                1,
                format!(
                    "grid sizes must be non-negative integers, found '{}'",
                    show(word)
                ),
            )
        })?);
    }
    let (width, height, depth, c) = match numbers[..] {
        [w, h, c] => (w, h, 1, c),
        [w, h, d, c] => (w, h, d, c),
        _ => return Err(bad()),
    };
    let c = u32::try_from(c).unwrap_or(0);
    let hood = if numbers.len() == 3 {
        Connectivity::from_number(c).map(Hood::Plane)
    } else {
        VolumeConnectivity::from_number(c).map(Hood::Volume)
    }
    .ok_or_else(bad)?;
    let pixels = width.saturating_mul(height).saturating_mul(depth);
    let header = Header {
        width: width.min(u32::MAX as u64) as u32,
        height: height.min(u32::MAX as u64) as u32,
        depth: depth.min(u32::MAX as u64) as u32,
        hood,
        pixels,
    };
    if pixels == 0 || pixels > crate::grid::MAX_PIXELS {
        let size = match hood {
            Hood::Plane(_) => format!("{width}x{height}"),
            Hood::Volume(_) => format!("{width}x{height}x{depth}"),
        };
        return Err(syntax(1, format!("grid size {size} is not supported")));
    }
    Ok(header)
}

/// The direction of the 2D arc u → v (1-based pixel ids), or what is wrong with it.
fn plane_direction(width: u32, c: Connectivity, u: u64, v: u64) -> Result<usize, String> {
    let w = width as u64;
    let (ux, uy) = ((u - 1) % w, (u - 1) / w);
    let (vx, vy) = ((v - 1) % w, (v - 1) / w);
    let dx = vx as i64 - ux as i64;
    let dy = vy as i64 - uy as i64;
    Direction::from_offset(dx.clamp(-2, 2) as i32, dy.clamp(-2, 2) as i32)
        .map(Direction::index)
        .filter(|&d| d < c.number() as usize)
        .ok_or_else(|| {
            format!(
                "pixels ({ux},{uy}) and ({vx},{vy}) are not {}-connected neighbours",
                c.number()
            )
        })
}

/// The direction of the 3D arc u → v (1-based voxel ids), or what is wrong with it.
fn volume_direction(
    header: &Header,
    c: VolumeConnectivity,
    u: u64,
    v: u64,
) -> Result<usize, String> {
    let (w, h) = (header.width as u64, header.height as u64);
    let at = |id: u64| ((id - 1) % w, (id - 1) / w % h, (id - 1) / (w * h));
    let (a, b) = (at(u), at(v));
    let step = |p: u64, q: u64| (q as i64 - p as i64).clamp(-2, 2);
    c.direction((step(a.0, b.0), step(a.1, b.1), step(a.2, b.2)))
        .ok_or_else(|| {
            format!(
                "voxels {a:?} and {b:?} are not {}-connected neighbours",
                c.number()
            )
        })
}

/// Makes `arr` long enough for index `i` (below `n`), growing geometrically up to `n`
/// values.
fn grow(arr: &mut Vec<i32>, i: u64, n: u64) -> &mut i32 {
    let i = i as usize;
    if i >= arr.len() {
        let len = (i + 1).max(arr.len() * 2).min(n as usize);
        arr.resize(len, 0);
    }
    &mut arr[i]
}

fn add(slot: &mut i32, cap: u64, line: u64, u: u64, v: u64) -> Result<(), DimacsError> {
    let sum = *slot as u64 + cap;
    if sum > MAX_CAP {
        return Err(syntax(
            line,
            format!(
                "capacity of arc {u} -> {v} adds up to {sum} over duplicate arcs, more than 2^31-1"
            ),
        ));
    }
    *slot = sum as i32;
    Ok(())
}

/// Whitespace-separated tokens of one line.
struct Tokens<'a> {
    rest: &'a [u8],
    line: u64,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a [u8], line: u64) -> Self {
        Self { rest: text, line }
    }

    fn next_word(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &self.rest[start..];
        let end = rest
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len());
        self.rest = &rest[end..];
        Some(&rest[..end])
    }

    fn number(&mut self, what: &str) -> Result<u64, DimacsError> {
        let word = self
            .next_word()
            .ok_or_else(|| syntax(self.line, format!("truncated line: missing {what}")))?;
        parse_u64(word).ok_or_else(|| {
            syntax(
                self.line,
                format!(
                    "{what} must be a non-negative integer, found '{}'",
                    show(word)
                ),
            )
        })
    }

    fn capacity(&mut self) -> Result<u64, DimacsError> {
        let word = self
            .next_word()
            .ok_or_else(|| syntax(self.line, "truncated line: missing capacity"))?;
        if word.first() == Some(&b'-') && parse_u64(&word[1..]).is_some() {
            return Err(syntax(
                self.line,
                format!("negative capacity {}", show(word)),
            ));
        }
        let cap = parse_u64(word).ok_or_else(|| {
            syntax(
                self.line,
                format!("capacity must be an integer, found '{}'", show(word)),
            )
        })?;
        if cap > MAX_CAP {
            return Err(syntax(
                self.line,
                format!("capacity {cap} is more than 2^31-1"),
            ));
        }
        Ok(cap)
    }

    fn end(&mut self) -> Result<(), DimacsError> {
        match self.next_word() {
            None => Ok(()),
            Some(extra) => Err(syntax(
                self.line,
                format!("unexpected '{}' at the end of the line", show(extra)),
            )),
        }
    }
}

fn show(word: &[u8]) -> String {
    let s = String::from_utf8_lossy(word);
    if s.chars().count() > 24 {
        format!("{}…", s.chars().take(24).collect::<String>())
    } else {
        s.into_owned()
    }
}

/// Decimal digits to u64; `None` on anything else or on overflow.
fn parse_u64(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in word {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Writes `problem` as DIMACS grid text, listing every non-zero arc once.
pub fn write(problem: &GridProblem, out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let (w, h) = (problem.width(), problem.height());
    let n = problem.pixels() as u64;
    let dirs = problem.connectivity().directions();
    let count = |a: &[i32]| a.iter().filter(|&&c| c != 0).count() as u64;
    let arcs = count(problem.source())
        + count(problem.sink())
        + dirs.iter().map(|&d| count(problem.edges(d))).sum::<u64>();
    writeln!(out, "c grid {w} {h} {}", problem.connectivity().number())?;
    writeln!(out, "p max {} {arcs}", n + 2)?;
    writeln!(out, "n {} s", n + 1)?;
    writeln!(out, "n {} t", n + 2)?;
    for (i, (&s, &t)) in problem.source().iter().zip(problem.sink()).enumerate() {
        let p = i as u64 + 1;
        if s != 0 {
            writeln!(out, "a {} {p} {s}", n + 1)?;
        }
        if t != 0 {
            writeln!(out, "a {p} {} {t}", n + 2)?;
        }
    }
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            for &d in dirs {
                let c = problem.edges(d)[i];
                if let (true, Some(j)) = (c != 0, problem.neighbour(x, y, d)) {
                    writeln!(out, "a {} {} {c}", i + 1, j + 1)?;
                }
            }
        }
    }
    out.flush()
}

/// Writes `problem` as DIMACS text of the 3D dialect (`c grid W H D C`), listing every
/// non-zero arc once, per voxel: s→p, p→t, then p's neighbour arcs in direction order.
pub fn write_volume(problem: &VolumeProblem, out: impl Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let (w, h, d) = (problem.width(), problem.height(), problem.depth());
    let n = problem.voxels() as u64;
    let k = problem.connectivity().number() as usize;
    let count = |a: &[i32]| a.iter().filter(|&&c| c != 0).count() as u64;
    let arcs = count(problem.source())
        + count(problem.sink())
        + (0..k).map(|dir| count(problem.edges(dir))).sum::<u64>();
    writeln!(out, "c grid {w} {h} {d} {k}")?;
    writeln!(out, "p max {} {arcs}", n + 2)?;
    writeln!(out, "n {} s", n + 1)?;
    writeln!(out, "n {} t", n + 2)?;
    for i in 0..problem.voxels() {
        let p = i as u64 + 1;
        let (s, t) = (problem.source()[i], problem.sink()[i]);
        if s != 0 {
            writeln!(out, "a {} {p} {s}", n + 1)?;
        }
        if t != 0 {
            writeln!(out, "a {p} {} {t}", n + 2)?;
        }
        for dir in 0..k {
            let c = problem.edges(dir)[i];
            if let (true, Some(j)) = (c != 0, problem.step(i, dir)) {
                writeln!(out, "a {p} {} {c}", j + 1)?;
            }
        }
    }
    out.flush()
}
