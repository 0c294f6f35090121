"""squeeze / unsqueeze for triton.language, written with tl primitives (reshape, expand_dims)."""
import triton.language as tl
from triton.runtime.jit import constexpr_function, jit


@constexpr_function
def _shape_without(shape, dim):
    """The shape with the size-1 axis dim removed (checked at compile time)."""
    dims = len(shape)
    axis = dim + dims if dim < 0 else dim
    if not 0 <= axis < dims:
        raise ValueError(f"squeeze: dim {dim} is out of range for a {dims}-d tensor")
    if shape[axis] != 1:
        raise ValueError(f"squeeze: dim {dim} has size {shape[axis]}, not 1")
    return [size for index, size in enumerate(shape) if index != axis]


@jit
def squeeze(x, dim: tl.constexpr):
    """Remove axis dim, which must have size 1."""
    return tl.reshape(x, _shape_without(x.shape, dim))


@jit
def unsqueeze(x, dim: tl.constexpr):
    """Insert an axis of size 1 at dim."""
    return tl.expand_dims(x, dim)
