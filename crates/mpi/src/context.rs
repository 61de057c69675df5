//! `MpiContext`: MPI initialised, this rank placed on its share of the node, and the
//! communicators the distributed ops use.

use std::cell::RefCell;
use std::collections::HashMap;

use mpi::Threading;
use mpi::environment::Universe;
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use strata_backend::{CpuBackend, ProviderKind};
use strata_tensor::{Error, Result};
use strata_topology::{CpuId, CpuSet, CpuTopology, NumaNodeId};

use crate::agree::all_gather_strings;
use crate::grid::ProcessGrid;
use crate::placement::{PlacementMap, RankPlacement, RankShare, ShareKind, plan_rank_share};

const OP: &str = "mpi_init";

/// How [`MpiContext::init_with`] places this rank.
#[derive(Clone, Debug)]
pub struct PlacementOptions {
    /// Threads per op of the rank's backend (default: its share of the node's CPUs and
    /// cgroup quota).
    pub threads: Option<usize>,
    /// The GEMM provider of the rank's backend (default faer).
    pub kind: ProviderKind,
    /// Pin the calling (main) thread to the rank's CPUs, so work that runs inline and
    /// MPI's own progress stay on the share (default on, where the OS allows pinning).
    pub pin_main_thread: bool,
}

impl Default for PlacementOptions {
    fn default() -> Self {
        PlacementOptions { threads: None, kind: ProviderKind::Faer, pin_main_thread: true }
    }
}

/// An initialised MPI job as strata sees it: the world communicator, this rank's
/// placement and its [`CpuBackend`], and the sub-communicators of process grids.
///
/// One per process (MPI initialises once); dropping it finalises MPI. Every method that
/// communicates is collective over the world communicator: all ranks call it, in the
/// same order, and all get the same success or the same typed error.
///
/// ```no_run
/// use strata_mpi::MpiContext;
/// let ctx = MpiContext::init()?;
/// if ctx.rank() == 0 {
///     print!("{}", ctx.placement_map());
/// }
/// # Ok::<(), strata_tensor::Error>(())
/// ```
pub struct MpiContext {
    // Field order is drop order: communicators are freed before MPI is finalised.
    grid_comms: RefCell<HashMap<Vec<usize>, GridComms>>,
    pub(crate) world: SimpleCommunicator,
    backend: CpuBackend,
    map: PlacementMap,
    _universe: Universe,
}

/// The row and column communicators of one 2-D grid, for this rank.
pub(crate) struct GridComms {
    /// Ranks of this rank's grid row, ranked by grid column.
    pub row: SimpleCommunicator,
    /// Ranks of this rank's grid column, ranked by grid row.
    pub col: SimpleCommunicator,
}

impl std::fmt::Debug for MpiContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiContext")
            .field("rank", &self.rank())
            .field("size", &self.size())
            .field("backend", &self.backend)
            .finish()
    }
}

impl MpiContext {
    /// Initialises MPI and places this rank with [`PlacementOptions::default`].
    ///
    /// Errors: see [`MpiContext::init_with`].
    pub fn init() -> Result<Self> {
        Self::init_with(&PlacementOptions::default())
    }

    /// Initialises MPI (threads: funneled, since only the calling thread talks to MPI),
    /// splits the world by shared-memory node, plans this rank's share from every local
    /// rank's affinity mask ([`plan_rank_share`]), pins the main thread when asked,
    /// builds the rank's backend there and all-gathers the placement map.
    ///
    /// Errors: `RuntimeState` when MPI was already initialised in this process, the
    /// topology cannot be discovered or the backend cannot be built. A failure on one rank
    /// fails every rank (the placement step ends with an agreement).
    pub fn init_with(options: &PlacementOptions) -> Result<Self> {
        let (universe, _provided) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| Error::runtime_state(OP, "MPI is already initialised in this process"))?;
        let world = universe.world();
        let node = world.split_shared(world.rank());
        let local_rank = node.rank() as usize;
        let local_size = node.size() as usize;

        let placed = place_rank(&node, local_rank, options);
        let verdict =
            placed.as_ref().map(|_| ()).map_err(|e| Error::new(e.kind(), e.op().to_string(), e.message().to_string()));
        crate::agree::agree(&world, OP, verdict, &crate::agree::Signature::default())?;
        // INVARIANT: the agreement passed, so this rank's placement succeeded.
        let (share, backend, pinned) = placed?;

        let host = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".to_string());
        let line = encode_placement(&host, local_rank, local_size, &share, pinned);
        let lines = all_gather_strings(&world, &line);
        let ranks = lines.iter().enumerate().map(|(r, l)| decode_placement(r, l)).collect::<Result<Vec<_>>>()?;
        Ok(MpiContext {
            grid_comms: RefCell::new(HashMap::new()),
            world,
            backend,
            map: PlacementMap { ranks },
            _universe: universe,
        })
    }

    /// This rank in the world communicator.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// The world communicator (for the caller's own MPI calls).
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// This rank's backend, placed on its share.
    pub fn backend(&self) -> &CpuBackend {
        &self.backend
    }

    /// Where every rank computes (the same map on every rank).
    pub fn placement_map(&self) -> &PlacementMap {
        &self.map
    }

    /// This rank's line of the placement map.
    pub fn placement(&self) -> &RankPlacement {
        &self.map.ranks[self.rank()]
    }

    /// Runs `f` with the row and column communicators of the 2-D `grid` (created on
    /// first use, collectively, and kept).
    pub(crate) fn with_grid_comms<R>(&self, grid: &ProcessGrid, f: impl FnOnce(&GridComms) -> R) -> R {
        let mut comms = self.grid_comms.borrow_mut();
        let entry = comms.entry(grid.dims().to_vec()).or_insert_with(|| {
            let coords = grid.coords(self.rank());
            let (row, col) = (coords[0] as i32, coords[1] as i32);
            // INVARIANT: every color is a valid non-negative value, so both splits give
            // a communicator.
            let row_comm = self.world.split_by_color_with_key(Color::with_value(row), col);
            let col_comm = self.world.split_by_color_with_key(Color::with_value(col), row);
            GridComms {
                row: row_comm.unwrap_or_else(|| self.world.duplicate()),
                col: col_comm.unwrap_or_else(|| self.world.duplicate()),
            }
        });
        f(entry)
    }

    /// Checks that `grid` spans exactly the world's ranks.
    pub(crate) fn check_grid(&self, op: &'static str, grid: &ProcessGrid) -> Result<()> {
        if grid.size() != self.size() {
            return Err(Error::invalid_argument(
                op,
                format!("the process grid {grid} has {} ranks, the job has {}", grid.size(), self.size()),
            ));
        }
        Ok(())
    }
}

/// Gathers every local rank's affinity, plans this rank's share, pins the main thread
/// and builds the backend.
fn place_rank(
    node: &SimpleCommunicator,
    local_rank: usize,
    options: &PlacementOptions,
) -> Result<(RankShare, CpuBackend, bool)> {
    // Local failures must not skip the collective below: compute, exchange, then judge.
    let topology: Result<CpuTopology> = strata_topology::discover()
        .map_err(|e| Error::runtime_state(OP, format!("discovering the node's topology: {e}")).with_source(e));
    let own = topology.as_ref().map(|t| t.allowed_cpus().to_string()).unwrap_or_default();
    let masks = all_gather_strings(node, &own);
    let topology = topology?;
    let affinities = masks
        .iter()
        .map(|m| CpuSet::parse_possibly_empty(m).ok().flatten())
        .collect::<Option<Vec<CpuSet>>>()
        .ok_or_else(|| Error::runtime_state(OP, format!("a local rank could not report its CPUs: {masks:?}")))?;
    let mut share = plan_rank_share(&topology, local_rank, &affinities)?;
    if let Some(t) = options.threads {
        if t == 0 {
            return Err(Error::invalid_argument(OP, "the rank's thread count must be at least 1"));
        }
        share.threads = t;
    }
    let pinned = options.pin_main_thread
        && topology.is_pinnable()
        && share.kind != ShareKind::Overlapping
        && strata_topology::pin_current_thread(&share.cpus).is_ok();
    let backend = share.backend(&topology, options.kind)?;
    Ok((share, backend, pinned))
}

fn encode_placement(host: &str, local_rank: usize, local_size: usize, share: &RankShare, pinned: bool) -> String {
    let nodes: Vec<String> = share.nodes.iter().map(|n| n.0.to_string()).collect();
    format!(
        "{}|{}|{}|{}|{}|{}|{}|{}",
        local_rank,
        local_size,
        share.cpus,
        nodes.join(","),
        share.threads,
        share.kind as u8,
        u8::from(pinned),
        host
    )
}

fn decode_placement(world_rank: usize, line: &str) -> Result<RankPlacement> {
    let bad = || Error::internal(OP, format!("rank {world_rank} sent a malformed placement line {line:?}"));
    let fields: Vec<&str> = line.splitn(8, '|').collect();
    if fields.len() != 8 {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<usize>().map_err(|_| bad());
    let kind = match num(fields[5])? {
        0 => ShareKind::LauncherBound,
        1 => ShareKind::NumaNodes,
        2 => ShareKind::CpuShare,
        3 => ShareKind::Oversubscribed,
        _ => ShareKind::Overlapping,
    };
    let cpus = CpuSet::parse_possibly_empty(fields[2]).ok().flatten().unwrap_or_else(|| CpuSet::single(CpuId(0)));
    let nodes = fields[3]
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<u32>().map(NumaNodeId).map_err(|_| bad()))
        .collect::<Result<Vec<_>>>()?;
    Ok(RankPlacement {
        world_rank,
        host: fields[7].to_string(),
        local_rank: num(fields[0])?,
        local_size: num(fields[1])?,
        share: RankShare { cpus, nodes, threads: num(fields[4])?, kind },
        main_thread_pinned: fields[6] == "1",
    })
}
