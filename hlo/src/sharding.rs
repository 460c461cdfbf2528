//! How an SPMD program's arrays lie on its devices: an `OpSharding` read as a split of one
//! global array into per-device shards, and the copies between the global array and a shard.
//!
//! XLA's meaning of a sharding (`xla_data.proto`'s `OpSharding`, `hlo_sharding.h`): a replicated array is whole on every device; a maximal one is whole on the one
//! device its tile assignment names; a tiled one has `tile_assignment_dimensions[k]` tiles
//! along dimension `k`, device `tile_assignment[t]` holding tile `t`, each tile
//! `ceil(extent / tiles)` long (the last ones padded past the array's end); trailing tile
//! dimensions beyond the array's rank (`replicate_on_last_tile_dim`, `last_tile_dims`) group
//! devices that hold the same tile. The device list is explicit (`tile_assignment_devices`) or
//! an iota reshaped and transposed (`iota_reshape_dims`, `iota_transpose_perm`).

use crate::proto::{HloModuleProto, OpSharding};
use std::collections::BTreeMap;

/// One array's split over the devices of an SPMD program.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceSplit {
    /// Whole on every device.
    Replicated,
    /// Whole on this device; the other devices hold an array of the same shape nothing reads.
    Maximal(i64),
    /// `parts[k]` tiles along dimension `k`; `tile_of[device]` is the device's tile.
    Tiled {
        parts: Vec<i64>,
        tile_of: BTreeMap<i64, Vec<i64>>,
    },
}

/// `OpSharding.type` numbers (xla_data.proto).
const REPLICATED: i32 = 0;
const MAXIMAL: i32 = 1;
const TUPLE: i32 = 2;
const OTHER: i32 = 3;

impl DeviceSplit {
    /// The split an array of rank `rank` has under `s` (a sharding of an array, not a tuple).
    /// Manual, unreduced and unknown shardings are refused: their shards are not pieces of one
    /// global array.
    pub fn from_proto(s: &OpSharding, rank: usize) -> Result<DeviceSplit, String> {
        match s.r#type {
            REPLICATED => Ok(DeviceSplit::Replicated),
            MAXIMAL => Ok(DeviceSplit::Maximal(
                s.tile_assignment_devices.first().copied().unwrap_or(0),
            )),
            OTHER => tiled(s, rank),
            TUPLE => Err("a tuple sharding where an array's is expected".into()),
            t => Err(format!(
                "sharding of type {t} (manual, unreduced or unknown): its shards are no pieces of one global array"
            )),
        }
    }

    /// The shape of every device's shard of an array of extents `global`: each tiled dimension
    /// `ceil(extent / tiles)` long.
    pub fn shard_dims(&self, global: &[i64]) -> Vec<i64> {
        match self {
            DeviceSplit::Tiled { parts, .. } => global
                .iter()
                .zip(parts)
                .map(|(&d, &p)| (d + p - 1) / p.max(1))
                .collect(),
            _ => global.to_vec(),
        }
    }

    /// Where device `device`'s shard starts in the global array (the whole array for a
    /// replicated or maximal split); `None` for a device the tile assignment leaves out.
    pub fn shard_start(&self, device: i64, global: &[i64]) -> Option<Vec<i64>> {
        match self {
            DeviceSplit::Replicated | DeviceSplit::Maximal(_) => Some(vec![0; global.len()]),
            DeviceSplit::Tiled { tile_of, .. } => {
                let tile = tile_of.get(&device)?;
                let shard = self.shard_dims(global);
                Some(tile.iter().zip(&shard).map(|(t, s)| t * s).collect())
            }
        }
    }

    /// The device whose shard this one is read from when putting the global array back
    /// together: for each tile, the first device (by number) holding it; the owner of a maximal
    /// array; device 0 of a replicated one.
    pub fn readers(&self) -> Vec<i64> {
        match self {
            DeviceSplit::Replicated => vec![0],
            DeviceSplit::Maximal(d) => vec![*d],
            DeviceSplit::Tiled { tile_of, .. } => {
                let mut first: BTreeMap<&Vec<i64>, i64> = BTreeMap::new();
                for (d, t) in tile_of {
                    first.entry(t).or_insert(*d);
                }
                first.into_values().collect()
            }
        }
    }
}

fn tiled(s: &OpSharding, rank: usize) -> Result<DeviceSplit, String> {
    let dims = &s.tile_assignment_dimensions;
    let trailing = if s.replicate_on_last_tile_dim {
        1
    } else {
        s.last_tile_dims.len()
    };
    if dims.len() != rank + trailing {
        return Err(format!(
            "a tile assignment of {} dimensions ({trailing} trailing) for an array of rank {rank}",
            dims.len()
        ));
    }
    if dims.iter().any(|&d| d < 1) {
        return Err(format!("tile assignment dimensions {dims:?}"));
    }
    let total: i64 = dims.iter().product();
    let devices = if !s.tile_assignment_devices.is_empty() {
        s.tile_assignment_devices.clone()
    } else {
        iota_devices(&s.iota_reshape_dims, &s.iota_transpose_perm)?
    };
    if devices.len() as i64 != total {
        return Err(format!(
            "{} devices for a tile assignment of {total} tiles",
            devices.len()
        ));
    }
    let mut tile_of = BTreeMap::new();
    for (flat, &device) in devices.iter().enumerate() {
        let coords = unflatten(flat as i64, dims);
        if tile_of
            .insert(device, coords[..rank].to_vec())
            .is_some_and(|t: Vec<i64>| t != coords[..rank])
        {
            return Err(format!("device {device} holds two tiles"));
        }
    }
    Ok(DeviceSplit::Tiled {
        parts: dims[..rank].to_vec(),
        tile_of,
    })
}

/// The device list of an iota tile assignment: `0..n` laid out as `reshape`, transposed by
/// `perm`, read in row-major order.
fn iota_devices(reshape: &[i64], perm: &[i32]) -> Result<Vec<i64>, String> {
    let perm: Vec<usize> = if perm.is_empty() {
        (0..reshape.len()).collect()
    } else {
        perm.iter().map(|&p| p as usize).collect()
    };
    let mut seen = vec![false; reshape.len()];
    if perm.len() != reshape.len()
        || perm
            .iter()
            .any(|&p| p >= reshape.len() || std::mem::replace(&mut seen[p], true))
    {
        return Err(format!("iota transpose {perm:?} of dimensions {reshape:?}"));
    }
    let transposed: Vec<i64> = perm.iter().map(|&p| reshape[p]).collect();
    let n: i64 = reshape.iter().product();
    Ok((0..n)
        .map(|flat| {
            // Element `flat` of the transposed array is element `i` of the iota, where
            // i[perm[k]] = j[k].
            let j = unflatten(flat, &transposed);
            let mut i = vec![0; reshape.len()];
            for (k, &p) in perm.iter().enumerate() {
                i[p] = j[k];
            }
            flatten(&i, reshape)
        })
        .collect())
}

fn unflatten(mut flat: i64, dims: &[i64]) -> Vec<i64> {
    let mut c = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        c[k] = flat % dims[k];
        flat /= dims[k];
    }
    c
}

fn flatten(c: &[i64], dims: &[i64]) -> i64 {
    c.iter().zip(dims).fold(0, |acc, (i, d)| acc * d + i)
}

/// Calls `f(global_offset, shard_offset, run)` for every row-major run of `run` elements that a
/// shard of extents `shard` starting at `start` shares with the global array of extents
/// `global` (offsets in elements; the shard's padding past the array's end is in no run).
fn runs(global: &[i64], start: &[i64], shard: &[i64], mut f: impl FnMut(usize, usize, usize)) {
    let rank = global.len();
    let inside: Vec<i64> = (0..rank)
        .map(|k| (global[k] - start[k]).clamp(0, shard[k]))
        .collect();
    if inside.iter().any(|&n| n == 0) && rank > 0 {
        return;
    }
    if rank == 0 {
        f(0, 0, 1);
        return;
    }
    let outer: Vec<i64> = inside[..rank - 1].to_vec();
    let count: i64 = outer.iter().product();
    for flat in 0..count {
        let c = unflatten(flat, &outer);
        let mut g = 0i64;
        let mut s = 0i64;
        for k in 0..rank - 1 {
            g = g * global[k] + start[k] + c[k];
            s = s * shard[k] + c[k];
        }
        g = g * global[rank - 1] + start[rank - 1];
        s *= shard[rank - 1];
        f(g as usize, s as usize, inside[rank - 1] as usize);
    }
}

/// The shard of extents `shard` at `start` of a row-major global array of `elem`-byte elements
/// (`data`, extents `global`), row-major; padding past the array's end is zero.
pub fn extract(data: &[u8], global: &[i64], elem: usize, start: &[i64], shard: &[i64]) -> Vec<u8> {
    let n: i64 = shard.iter().product();
    let mut out = vec![0u8; n.max(0) as usize * elem];
    runs(global, start, shard, |g, s, len| {
        out[s * elem..(s + len) * elem].copy_from_slice(&data[g * elem..(g + len) * elem]);
    });
    out
}

/// Writes a shard (as [`extract`] gives it) back into the global array; its padding is dropped.
pub fn insert(
    data: &mut [u8],
    global: &[i64],
    elem: usize,
    start: &[i64],
    shard: &[i64],
    piece: &[u8],
) {
    runs(global, start, shard, |g, s, len| {
        data[g * elem..(g + len) * elem].copy_from_slice(&piece[s * elem..(s + len) * elem]);
    });
}

/// The shardings of an HLO module's entry computation: each parameter's (by parameter number;
/// `None` where it has none) and its root's (a tuple sharding for a tuple result).
pub fn entry_shardings(m: &HloModuleProto) -> (Vec<Option<OpSharding>>, Option<OpSharding>) {
    let Some(entry) = m
        .computations
        .iter()
        .find(|c| c.id == m.entry_computation_id)
        .or_else(|| {
            m.computations
                .iter()
                .find(|c| c.name == m.entry_computation_name)
        })
    else {
        return (Vec::new(), None);
    };
    let mut params: Vec<Option<OpSharding>> = Vec::new();
    let mut root = None;
    for i in &entry.instructions {
        if i.opcode == "parameter" {
            let k = i.parameter_number.max(0) as usize;
            if params.len() <= k {
                params.resize(k + 1, None);
            }
            params[k] = i.sharding.clone();
        }
        if i.id == entry.root_id {
            root = i.sharding.clone();
        }
    }
    (params, root)
}

/// The array shardings of a result's leaves, in order: a tuple sharding's elements, or the one
/// sharding repeated (a sharding given to a whole tuple applies to each leaf); replicated where
/// there is none.
pub fn leaf_shardings(root: Option<&OpSharding>, leaves: usize) -> Vec<OpSharding> {
    match root {
        Some(s) if s.r#type == TUPLE && s.tuple_shardings.len() == leaves => {
            s.tuple_shardings.clone()
        }
        Some(s) if s.r#type != TUPLE => vec![s.clone(); leaves],
        _ => vec![OpSharding::default(); leaves],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiled_sharding(dims: &[i64], devices: &[i64]) -> OpSharding {
        OpSharding {
            r#type: OTHER,
            tile_assignment_dimensions: dims.to_vec(),
            tile_assignment_devices: devices.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn an_iota_assignment_transposed_lists_devices_as_xla_prints_them() {
        // {devices=[2,2]<=[2,2]T(1,0)}: devices 0 2 1 3.
        assert_eq!(iota_devices(&[2, 2], &[1, 0]).unwrap(), vec![0, 2, 1, 3]);
        // <=[4] is 0..4.
        assert_eq!(iota_devices(&[4], &[]).unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(
            iota_devices(&[2, 3], &[1, 0]).unwrap(),
            vec![0, 3, 1, 4, 2, 5]
        );
        assert!(iota_devices(&[2, 2], &[0, 0]).is_err());
    }

    #[test]
    fn an_uneven_split_pads_the_last_shard_and_puts_back_the_same_array() {
        // f32-sized elements (4 bytes), a [5,3] array split 2 ways along dimension 0 over
        // devices 1 and 0 (explicit assignment), replicated on a trailing dimension of 2.
        let mut s = tiled_sharding(&[2, 1, 2], &[1, 3, 0, 2]);
        s.replicate_on_last_tile_dim = true;
        let split = DeviceSplit::from_proto(&s, 2).unwrap();
        let global = [5i64, 3];
        assert_eq!(split.shard_dims(&global), vec![3, 3]);
        assert_eq!(split.shard_start(1, &global), Some(vec![0, 0]));
        assert_eq!(split.shard_start(3, &global), Some(vec![0, 0]));
        assert_eq!(split.shard_start(0, &global), Some(vec![3, 0]));
        assert_eq!(split.shard_start(7, &global), None);
        assert_eq!(split.readers(), vec![1, 0]);
        let data: Vec<u8> = (0..15u32).flat_map(|v| v.to_le_bytes()).collect();
        let last = extract(&data, &global, 4, &[3, 0], &[3, 3]);
        let vals: Vec<u32> = last
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, vec![9, 10, 11, 12, 13, 14, 0, 0, 0]);
        let mut back = vec![0u8; data.len()];
        for d in split.readers() {
            let start = split.shard_start(d, &global).unwrap();
            let piece = extract(&data, &global, 4, &start, &[3, 3]);
            insert(&mut back, &global, 4, &start, &[3, 3], &piece);
        }
        assert_eq!(back, data);
    }

    #[test]
    fn a_two_dimensional_mesh_gives_each_device_its_block() {
        // [4,4] over a 2x2 mesh with <=[2,2]T(1,0): device 2 holds tile (0,1).
        let s = OpSharding {
            r#type: OTHER,
            tile_assignment_dimensions: vec![2, 2],
            iota_reshape_dims: vec![2, 2],
            iota_transpose_perm: vec![1, 0],
            ..Default::default()
        };
        let split = DeviceSplit::from_proto(&s, 2).unwrap();
        assert_eq!(split.shard_start(2, &[4, 4]), Some(vec![0, 2]));
        assert_eq!(split.shard_start(1, &[4, 4]), Some(vec![2, 0]));
        let data: Vec<u8> = (0..16u8).collect();
        assert_eq!(
            extract(&data, &[4, 4], 1, &[0, 2], &[2, 2]),
            vec![2, 3, 6, 7]
        );
    }

    #[test]
    fn shardings_that_are_not_pieces_of_one_array_are_refused() {
        let manual = OpSharding {
            r#type: 4,
            ..Default::default()
        };
        assert!(DeviceSplit::from_proto(&manual, 1).is_err());
        assert!(DeviceSplit::from_proto(&tiled_sharding(&[2], &[0, 1]), 2).is_err());
        assert!(DeviceSplit::from_proto(&tiled_sharding(&[2], &[0]), 1).is_err());
        assert_eq!(
            DeviceSplit::from_proto(&tiled_sharding(&[1], &[3]), 1)
                .unwrap()
                .readers(),
            vec![3]
        );
    }
}
