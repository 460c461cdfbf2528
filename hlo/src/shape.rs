//! Shapes and layouts as HLO text writes them: `f32[2,<=3]{1,0:T(8,128)S(1)}`, `(s32[], f32[4])`,
//! `token[]`, `b(f32[16])`.

use crate::types::PrimitiveType;
use serde::{Deserialize, Serialize};

/// Size of an unbounded dynamic dimension (`?` in text), as XLA's `Shape::kUnboundedSize`.
pub const UNBOUNDED_SIZE: i64 = i64::MIN;
/// A tile dimension written `*` (XLA's `Tile::kCombineDimension`).
pub const TILE_COMBINE_DIMENSION: i64 = i64::MIN;

/// A physical layout. Only `minor_to_major` changes the meaning of a program (through `bitcast`);
/// the rest is kept so that a round trip through our printer loses nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Layout {
    pub minor_to_major: Vec<i64>,
    /// `T(8,128)(2,1)`: each tile's dimensions, major to minor.
    pub tiles: Vec<Vec<i64>>,
    /// `E(4)`: element size in bits, 0 when absent.
    pub element_size_bits: i64,
    /// `S(1)`: memory space, 0 when absent.
    pub memory_space: i64,
    /// Every other layout item (`D(D,C)`, `L(2)`, `#(s32)`, `*(u32)`, `SC(...)`, `P(...)`, `M(8)`),
    /// verbatim and in text order.
    pub other: Vec<String>,
}

impl Layout {
    /// The default (descending, row-major) layout for `rank` dimensions.
    pub fn row_major(rank: usize) -> Layout {
        Layout {
            minor_to_major: (0..rank as i64).rev().collect(),
            ..Layout::default()
        }
    }

    /// True when the layout has nothing but a minor_to_major list.
    pub fn is_plain(&self) -> bool {
        self.tiles.is_empty()
            && self.element_size_bits == 0
            && self.memory_space == 0
            && self.other.is_empty()
    }
}

/// An array shape: element type, dimensions (with per-dimension dynamic flags), optional layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArrayShape {
    pub ty: PrimitiveType,
    /// Extents. For a bounded dynamic dimension (`<=N`) the bound; for `?`, [`UNBOUNDED_SIZE`].
    pub dims: Vec<i64>,
    /// `dynamic[i]` is true for `<=N` and `?` dimensions.
    pub dynamic: Vec<bool>,
    pub layout: Option<Layout>,
}

impl ArrayShape {
    pub fn new(ty: PrimitiveType, dims: Vec<i64>) -> ArrayShape {
        let dynamic = vec![false; dims.len()];
        ArrayShape {
            ty,
            dims,
            dynamic,
            layout: None,
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements, or `None` when a dimension is unbounded or the product overflows.
    pub fn element_count(&self) -> Option<u64> {
        self.dims.iter().try_fold(1u64, |acc, &d| {
            if d < 0 {
                None
            } else {
                acc.checked_mul(d as u64)
            }
        })
    }

    pub fn is_static(&self) -> bool {
        !self.dynamic.iter().any(|&d| d)
    }

    /// The minor-to-major order in force: the layout's, or row-major when there is none.
    pub fn minor_to_major(&self) -> Vec<i64> {
        match &self.layout {
            Some(l) if l.minor_to_major.len() == self.dims.len() => l.minor_to_major.clone(),
            _ => (0..self.dims.len() as i64).rev().collect(),
        }
    }

    /// Same type and dimensions (ignoring layout and dynamic flags).
    pub fn same_dims_and_type(&self, other: &ArrayShape) -> bool {
        self.ty == other.ty && self.dims == other.dims
    }
}

/// An HLO shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
    Token,
    Opaque,
    /// A buffer holding an array (XLA's shape kind BUFFER, written `b(f32[16])`): what
    /// custom-calls such as `Pin` and `CreateBuffer` make, handed on to others that read or
    /// write it in place. Neither an array nor a tuple; the oracle does not evaluate it.
    Buffer(ArrayShape),
}

impl Shape {
    pub fn array(ty: PrimitiveType, dims: impl Into<Vec<i64>>) -> Shape {
        Shape::Array(ArrayShape::new(ty, dims.into()))
    }
    pub fn scalar(ty: PrimitiveType) -> Shape {
        Shape::array(ty, Vec::new())
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn tuple_elements(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(t) => Some(t),
            _ => None,
        }
    }
    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Shape::Array(_))
    }
    /// The element type of an array shape.
    pub fn element_type(&self) -> Option<PrimitiveType> {
        self.as_array().map(|a| a.ty)
    }
    pub fn dims(&self) -> &[i64] {
        match self {
            Shape::Array(a) => &a.dims,
            _ => &[],
        }
    }
    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// Equal up to layouts (and dynamic flags' layouts), recursively: XLA's `Shape::Equal().IgnoreLayout()`.
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => {
                a.ty == b.ty && a.dims == b.dims && a.dynamic == b.dynamic
            }
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
            (Shape::Buffer(a), Shape::Buffer(b)) => {
                Shape::Array(a.clone()).compatible(&Shape::Array(b.clone()))
            }
            _ => false,
        }
    }

    /// This shape with every layout removed.
    pub fn without_layout(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(Shape::without_layout).collect()),
            Shape::Buffer(a) => Shape::Buffer(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            s => s.clone(),
        }
    }

    /// The array leaves in depth-first order (tuples flattened as XLA flattens parameters and results).
    pub fn leaves(&self) -> Vec<&ArrayShape> {
        let mut out = Vec::new();
        fn walk<'a>(s: &'a Shape, out: &mut Vec<&'a ArrayShape>) {
            match s {
                Shape::Array(a) => out.push(a),
                Shape::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
                _ => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// The sub-shape at a tuple index path.
    pub fn subshape(&self, index: &[usize]) -> Option<&Shape> {
        let mut s = self;
        for &i in index {
            s = s.tuple_elements()?.get(i)?;
        }
        Some(s)
    }
}

impl From<ArrayShape> for Shape {
    fn from(a: ArrayShape) -> Shape {
        Shape::Array(a)
    }
}
