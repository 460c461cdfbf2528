//! Typed attribute values: integer lists, windows, convolution dimension labels, pad configs,
//! slices; and the table deciding which attribute names get which type.

use super::cursor::{err_at, Cursor, PResult};
use crate::ir::{ConvDimLabels, PaddingDim, SliceDim, Window, WindowDim};

/// How an attribute's value is read, decided by the attribute's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    Bool,
    Ints,
    Str,
    Ident,
    /// One computation (`%c`) or, written in braces, a list.
    Comp,
    /// A braced list of computations.
    Comps,
    Window,
    ConvDims,
    Padding,
    Slice,
    Instrs,
    Raw,
}

/// The typed attributes. Every name not listed is kept verbatim ([`AttrKind::Raw`]).
pub fn attr_kind(name: &str) -> AttrKind {
    use AttrKind::*;
    match name {
        "dimensions"
        | "lhs_batch_dims"
        | "rhs_batch_dims"
        | "lhs_contracting_dims"
        | "rhs_contracting_dims"
        | "lhs_ragged_dims"
        | "rhs_group_dims"
        | "offset_dims"
        | "collapsed_slice_dims"
        | "start_index_map"
        | "operand_batching_dims"
        | "start_indices_batching_dims"
        | "slice_sizes"
        | "update_window_dims"
        | "inserted_window_dims"
        | "scatter_dims_to_operand_dims"
        | "input_batching_dims"
        | "scatter_indices_batching_dims"
        | "dynamic_slice_sizes"
        | "fft_length" => Ints,
        "index"
        | "iota_dimension"
        | "index_vector_dim"
        | "feature_group_count"
        | "batch_group_count"
        | "exponent_bits"
        | "mantissa_bits"
        | "k"
        | "feature_index"
        | "channel_id"
        | "all_gather_dimension"
        | "scatter_dimension"
        | "split_dimension"
        | "concat_dimension" => Int,
        "is_stable"
        | "indices_are_sorted"
        | "unique_indices"
        | "largest"
        | "left_side"
        | "lower"
        | "unit_diagonal"
        | "constrain_layout"
        | "use_global_device_ids"
        | "custom_call_has_side_effect"
        | "is_host_transfer" => Bool,
        "direction"
        | "type"
        | "kind"
        | "fft_type"
        | "distribution"
        | "algorithm"
        | "api_version"
        | "transpose_a"
        | "custom_call_schedule" => Ident,
        "to_apply" | "calls" | "body" | "condition" | "true_computation" | "false_computation"
        | "select" | "scatter" => Comp,
        "branch_computations" | "called_computations" => Comps,
        "custom_call_target" | "async_execution_thread" => Str,
        "window" => Window,
        "dim_labels" => ConvDims,
        "padding" => Padding,
        "slice" => Slice,
        "control-predecessors" => Instrs,
        _ => Raw,
    }
}

impl<'a> Cursor<'a> {
    /// After blanks: `{1,2,3}` (or `{}`).
    pub fn int_list(&mut self, what: &str) -> PResult<Vec<i64>> {
        self.expect(b'{', &format!("to start {what}"))?;
        let mut v = Vec::new();
        if self.eat(b'}')? {
            return Ok(v);
        }
        loop {
            v.push(self.int(what)?);
            if self.eat(b'}')? {
                return Ok(v);
            }
            self.expect(b',', &format!("between the integers of {what}"))?;
        }
    }

    /// `3x3` or `1_1x0_0`: groups separated by `x`, each a `_`-joined integer list.
    fn x_groups(&mut self, what: &str) -> PResult<Vec<Vec<i64>>> {
        let mut groups = Vec::new();
        loop {
            let mut g = vec![self.int_here(what)?];
            while self.peek() == Some(b'_') {
                self.pos += 1;
                g.push(self.int_here(what)?);
            }
            groups.push(g);
            if self.peek() == Some(b'x') {
                self.pos += 1;
            } else {
                return Ok(groups);
            }
        }
    }

    /// After blanks: `{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`.
    pub fn window(&mut self) -> PResult<Window> {
        self.skip_ws()?;
        let open = self.pos;
        self.expect(b'{', "to start a window")?;
        let mut w = Window::default();
        let mut seen_size = false;
        loop {
            self.skip_ws()?;
            if self.peek() == Some(b'}') {
                self.pos += 1;
                break;
            }
            let key_at = self.pos;
            let key = self.ident("a window field")?;
            self.expect(b'=', "after a window field name")?;
            self.skip_ws()?;
            let val_at = self.pos;
            let groups = self.x_groups(key)?;
            if w.dims.is_empty() && !seen_size {
                w.dims = vec![WindowDim::default(); groups.len()];
            }
            if groups.len() != w.dims.len() {
                return err_at(
                    val_at,
                    format!(
                        "window field {key} has {} dimensions, the window has {}",
                        groups.len(),
                        w.dims.len()
                    ),
                );
            }
            let want = if key == "pad" { 2 } else { 1 };
            if let Some(g) = groups.iter().find(|g| g.len() != want) {
                return err_at(
                    val_at,
                    format!(
                        "window field {key} takes {want} number(s) per dimension, got {}",
                        g.len()
                    ),
                );
            }
            for (d, g) in w.dims.iter_mut().zip(&groups) {
                match key {
                    "size" => d.size = g[0],
                    "stride" => d.stride = g[0],
                    "pad" => {
                        d.padding_low = g[0];
                        d.padding_high = g[1];
                    }
                    "lhs_dilate" => d.base_dilation = g[0],
                    "rhs_dilate" => d.window_dilation = g[0],
                    "rhs_reversal" => match g[0] {
                        0 => d.window_reversal = false,
                        1 => d.window_reversal = true,
                        v => {
                            return err_at(val_at, format!("rhs_reversal must be 0 or 1, not {v}"))
                        }
                    },
                    _ => return err_at(key_at, format!("unknown window field '{key}'")),
                }
            }
            if key == "size" {
                seen_size = true;
            }
        }
        if !w.dims.is_empty() && !seen_size {
            return err_at(open, "window without size=");
        }
        Ok(w)
    }

    /// After blanks: `b01f_01io->b01f`.
    pub fn conv_dims(&mut self) -> PResult<ConvDimLabels> {
        self.skip_ws()?;
        let start = self.pos;
        let lhs_at = self.pos;
        let lhs = self.label_run();
        if self.peek() != Some(b'_') {
            return err_at(
                self.pos,
                "expected '_' between input and kernel labels in dim_labels",
            );
        }
        self.pos += 1;
        let rhs_at = self.pos;
        let rhs = self.label_run();
        if !(self.peek() == Some(b'-') && self.peek_at(1) == Some(b'>')) {
            return err_at(
                self.pos,
                "expected '->' before the output labels in dim_labels",
            );
        }
        self.pos += 2;
        let out_at = self.pos;
        let out = self.label_run();
        let (ib, i_f, is) = labels_of(lhs, 'b', 'f', lhs_at)?;
        let (ki, ko, ks) = labels_of(rhs, 'i', 'o', rhs_at)?;
        let (ob, of, os) = labels_of(out, 'b', 'f', out_at)?;
        if is.len() != ks.len() || is.len() != os.len() {
            return err_at(
                start,
                "dim_labels: input, kernel and output need the same number of spatial dimensions",
            );
        }
        Ok(ConvDimLabels {
            input_batch: ib,
            input_feature: i_f,
            input_spatial: is,
            kernel_input_feature: ki,
            kernel_output_feature: ko,
            kernel_spatial: ks,
            output_batch: ob,
            output_feature: of,
            output_spatial: os,
        })
    }

    fn label_run(&mut self) -> &'a str {
        let s = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        &self.src[s..self.pos]
    }

    /// After blanks: `0_1x2_3_1` (empty for a rank-0 pad).
    pub fn padding(&mut self) -> PResult<Vec<PaddingDim>> {
        self.skip_inline_ws()?;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == b'-' || c == b'+')
        {
            return Ok(Vec::new());
        }
        let at = self.pos;
        let groups = self.x_groups("padding")?;
        groups
            .into_iter()
            .map(|g| match g[..] {
                [low, high] => Ok(PaddingDim {
                    low,
                    high,
                    interior: 0,
                }),
                [low, high, interior] => Ok(PaddingDim {
                    low,
                    high,
                    interior,
                }),
                _ => err_at(
                    at,
                    "padding takes low_high or low_high_interior per dimension",
                ),
            })
            .collect()
    }

    /// After blanks: `{[0:4], [1:3:2]}`.
    pub fn slice(&mut self) -> PResult<Vec<SliceDim>> {
        self.expect(b'{', "to start slice")?;
        let mut v = Vec::new();
        if self.eat(b'}')? {
            return Ok(v);
        }
        loop {
            self.expect(b'[', "to start a slice dimension")?;
            let start = self.int("slice start")?;
            self.expect(b':', "after the slice start")?;
            let limit = self.int("slice limit")?;
            let stride = if self.eat(b':')? {
                self.int("slice stride")?
            } else {
                1
            };
            self.expect(b']', "to close a slice dimension")?;
            v.push(SliceDim {
                start,
                limit,
                stride,
            });
            if self.eat(b'}')? {
                return Ok(v);
            }
            self.expect(b',', "between slice dimensions")?;
        }
    }
}

/// Reads one label string: positions of the two letters and of the spatial digits in order.
fn labels_of(s: &str, a: char, b: char, at: usize) -> PResult<(i64, i64, Vec<i64>)> {
    let mut pa = None;
    let mut pb = None;
    let mut spatial: Vec<Option<i64>> = Vec::new();
    for (i, ch) in s.chars().enumerate() {
        let i = i as i64;
        if ch == a && pa.is_none() {
            pa = Some(i);
        } else if ch == b && pb.is_none() {
            pb = Some(i);
        } else if let Some(d) = ch.to_digit(10) {
            let d = d as usize;
            if spatial.len() <= d {
                spatial.resize(d + 1, None);
            }
            if spatial[d].is_some() {
                return err_at(
                    at,
                    format!("dim_labels '{s}' repeats spatial dimension {d}"),
                );
            }
            spatial[d] = Some(i);
        } else {
            return err_at(at, format!("dim_labels '{s}': unexpected label '{ch}'"));
        }
    }
    let (Some(pa), Some(pb)) = (pa, pb) else {
        return err_at(
            at,
            format!("dim_labels '{s}' needs exactly one '{a}' and one '{b}'"),
        );
    };
    let spatial: Option<Vec<i64>> = spatial.into_iter().collect();
    let Some(spatial) = spatial else {
        return err_at(
            at,
            format!("dim_labels '{s}' skips a spatial dimension number"),
        );
    };
    Ok((pa, pb, spatial))
}
