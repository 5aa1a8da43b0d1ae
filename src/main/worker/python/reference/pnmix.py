"""pn-mix's packed-cache operations (``pnmix.PackedCacheOps``) in plain NumPy, written from protocols.md (pn-mix),
PROTOCOL.md's pn-mix table and the Java definitions (``compute/BitPacking``, ``compute/HalfFloat``,
``compute/GroupQuantizer``, ``compute/OneBitLevels``, ``pnmix/PackedBlock``, ``pnmix/PackedKvCache``,
``pnmix/CpuPackedCacheOps``).

Every operation is ``fn(inputs, params, precision) -> outputs``: ``inputs`` and ``outputs`` map tensor names to
NumPy arrays, ``params`` is the request's JSON object. ``OPERATIONS`` maps each operation name to its function and
the precisions it serves.

Bytes (packed streams, fp16 metadata, fp16 cache buffers) are mechspec's layout, bit for bit:

- a stream of ``count`` codes of ``bits`` bits puts code i at bits [i*bits, (i+1)*bits), LSB-first from the
  stream's first byte, zero-padded to a whole byte;
- a per-channel block holds one stream per channel over the tokens, channel-major; a per-token block one stream
  per (token, run of ``group_channels`` channels), token-major;
- each quantization group has 4 bytes of metadata: fp16 scale, then fp16 zero, little-endian; value =
  zero + code*scale.

The attention operations read the cache through ``DEQUANTIZERS`` (looked up at call time, or passed as
``dequantizers=``): a worker that lays out keys or values otherwise replaces the entry that reads them and reuses
``attend`` and ``decode`` unchanged. They read the cache one block (the sink, a quantized group, the residual) at a
time, keys in a first pass and values in a second, so a call holds the logits, the weights and one block's
dequantized tokens, never a dequantized copy of the whole cache (``packed_attention_working_set_bounded``).
"""

import functools
import numbers

import numpy as np

try:
    from mechspec_worker import InvalidArgument
except ImportError:  # the client is not on the path (standalone use of this module)
    class InvalidArgument(ValueError):
        """The input breaks the operation's preconditions (protocol error type ``invalid_argument``)."""


ONE_BIT_LEVELS = ("conditional_means", "min_max")


# ---------------------------------------------------------------------------------------------------------------
# fp16 (compute/HalfFloat): nearest, ties to even, directly from float64, subnormals included.

def to_half_bits(x):
    """fp16 bits (uint16) of the nearest half to each element of x (ties to even; overflow to +-inf; NaN to a
    quiet NaN with x's sign), rounding directly from float64 as HalfFloat.toHalfBits does."""
    x = np.asarray(x, dtype=np.float64)
    raw = np.ascontiguousarray(x).view(np.uint64)
    sign = ((raw >> np.uint64(48)) & np.uint64(0x8000)).astype(np.uint32)
    a = np.abs(x)
    nan = np.isnan(x)
    inf = a >= 65520.0  # halfway between the largest half 65504 and 2^16 rounds up to inf
    sub = a < 2.0 ** -14
    normal = ~(nan | inf | sub)
    mag = np.zeros(x.shape, dtype=np.uint32)
    mag[nan] = 0x7E00
    mag[inf] = 0x7C00
    # Subnormal range: value = m * 2^-24 with integer m; m == 1024 carries into the smallest normal exactly.
    mag[sub] = np.rint(a[sub] * 2.0 ** 24).astype(np.uint32)
    an = a[normal]
    if an.size:
        exp = np.frexp(an)[1].astype(np.int64) - 1  # Math.getExponent: -14 .. 15
        m = np.rint(np.ldexp(an, (10 - exp).astype(np.int32))).astype(np.int64)  # in [1024, 2048]
        e = exp + 15
        carry = m == 2048
        m[carry] = 1024
        e[carry] += 1
        bits = (e << 10) | (m - 1024)
        bits[e >= 31] = 0x7C00
        mag[normal] = bits.astype(np.uint32)
    return (sign | mag).astype(np.uint16)


def from_half_bits(h):
    """The float64 value of fp16 bits (exact)."""
    h = np.ascontiguousarray(np.asarray(h, dtype=np.uint16))
    return h.view(np.float16).astype(np.float64)


# ---------------------------------------------------------------------------------------------------------------
# Argument helpers.

def _int_param(params, name, minimum=None):
    if name not in params:
        raise InvalidArgument("missing parameter " + name)
    v = params[name]
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise InvalidArgument("parameter " + name + " = " + repr(v) + " is not an integer")
    v = int(v)
    if minimum is not None and v < minimum:
        raise InvalidArgument("parameter " + name + " must be >= " + str(minimum) + ", got " + str(v))
    return v


def _bool_param(params, name, default=None):
    if name not in params:
        if default is None:
            raise InvalidArgument("missing parameter " + name)
        return default
    v = params[name]
    if not isinstance(v, bool):
        raise InvalidArgument("parameter " + name + " = " + repr(v) + " is not a boolean")
    return v


def _one_bit_param(params):
    if "one_bit" not in params:
        raise InvalidArgument("missing parameter one_bit")
    v = params["one_bit"]
    if v not in ONE_BIT_LEVELS:
        raise InvalidArgument("parameter one_bit = " + repr(v) + " is not one of " + ", ".join(ONE_BIT_LEVELS))
    return v


def _only(inputs, names):
    """Rejects input tensors the operation does not take (a misspelt name would otherwise be ignored)."""
    extra = sorted(set(inputs) - set(names))
    if extra:
        raise InvalidArgument("unexpected input tensor(s) " + str(extra) + "; this operation takes " + str(sorted(names)))


def _tensor(inputs, name, dtype, ndim=None):
    if name not in inputs:
        raise InvalidArgument("missing input tensor " + name)
    a = np.asarray(inputs[name])
    if a.dtype != np.dtype(dtype):
        raise InvalidArgument(name + " has dtype " + str(a.dtype) + ", expected " + str(np.dtype(dtype)))
    if ndim is not None and a.ndim != ndim:
        raise InvalidArgument(name + " has shape " + str(list(a.shape)) + ", expected " + str(ndim) + " dimensions")
    return a


def _int_tensor(inputs, name, ndim):
    """An I32 tensor, as int64."""
    return _tensor(inputs, name, np.int32, ndim).astype(np.int64)


def _bytes_tensor(inputs, name, ndim=1):
    """A U8 buffer (1-D, or any shape with ndim=None), flat."""
    return np.ascontiguousarray(_tensor(inputs, name, np.uint8, ndim).reshape(-1))


def _float_tensor(inputs, name, ndim, dtype):
    """A floating-point tensor of exactly dtype, finite."""
    a = np.ascontiguousarray(_tensor(inputs, name, dtype, ndim))
    bad = ~np.isfinite(a)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InvalidArgument(name + "[" + str(i) + "] is " + repr(float(a.reshape(-1)[i])) + ": inputs must be finite")
    return a


def _require_bits(what, bits):
    if isinstance(bits, int) and 1 <= bits <= 8:  # the common scalar case, without NumPy's per-call overhead
        return
    bits = np.asarray(bits)
    bad = (bits < 1) | (bits > 8)
    if bad.any():
        b = int(bits.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
        raise InvalidArgument(what + " must be 1..8 bits, got " + str(b))


def _require_bytes(what, actual, expected):
    if actual != expected:
        raise InvalidArgument(what + " have " + str(actual) + " bytes, the layout needs " + str(expected))


def _dtype(precision):
    if precision == "f64":
        return np.float64
    if precision == "f32":
        return np.float32
    raise InvalidArgument("precision must be f64 or f32, got " + repr(precision))


def _exact(precision):
    if precision != "exact":
        raise InvalidArgument("precision must be exact, got " + repr(precision))


# ---------------------------------------------------------------------------------------------------------------
# Layouts (compute/BitPacking, CpuPackedCacheOps.channelLayout / tokenLayout).

def stream_bytes(count, bits):
    """Bytes of one stream of ``count`` codes of ``bits`` bits."""
    return (count * bits + 7) // 8


def channel_offsets(tokens, bits):
    """Byte offset of each channel's stream in a per-channel block, plus the total at index channels."""
    bits = np.asarray(bits, dtype=np.int64)
    off = np.zeros(bits.size + 1, dtype=np.int64)
    np.cumsum((tokens * bits + 7) // 8, out=off[1:])
    return off


def channel_layout(tokens, bits):
    bits = np.asarray(bits, dtype=np.int64)
    if tokens <= 0 or bits.size == 0:
        raise InvalidArgument("a per-channel block needs tokens and channels, got " + str(tokens) + " tokens, "
                              + str(bits.size) + " channels")
    _require_bits("channel bit width", bits)
    return channel_offsets(tokens, bits)


def token_layout(tokens, channels, group_channels, bits):
    """Value groups per token; checks the per-token block's shape."""
    if tokens <= 0:
        raise InvalidArgument("a per-token block needs tokens, got " + str(tokens))
    _require_bits("per-token group", bits)
    if group_channels <= 0 or channels <= 0 or channels % group_channels != 0:
        raise InvalidArgument("value group of " + str(group_channels) + " channels does not divide "
                              + str(channels) + " channels")
    return channels // group_channels


def _check_codes(codes, widths):
    """codes [tokens, channels] must fit in widths [channels] bits."""
    bad = (codes < 0) | (codes >= (np.int64(1) << widths)[None, :])
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        c = i % codes.shape[1]
        raise InvalidArgument("codes[" + str(i) + "] = " + str(int(codes.reshape(-1)[i])) + " does not fit in "
                              + str(int(widths[c])) + " bits")


def _pack_streams(codes, bits):
    """codes [n, count] of ``bits`` bits each -> [n, stream_bytes(count, bits)] uint8 streams."""
    n, count = codes.shape
    shifts = np.arange(bits, dtype=np.int64)
    bitarr = ((codes[:, :, None] >> shifts) & 1).astype(np.uint8).reshape(n, count * bits)
    return np.packbits(bitarr, axis=1, bitorder="little")  # zero-padded to whole bytes


def _read_codes(packed, byte, shift, mask):
    """The codes at byte indices ``byte`` (any shape) and bit shifts ``shift`` of ``packed`` (uint8), ``mask`` =
    2^bits - 1. A code may straddle two bytes, so each is read from the little-endian 16-bit word starting at its
    byte (the last byte's word takes a zero pad)."""
    word = np.zeros(packed.size + 1, dtype=np.uint16)
    word[:-1] = packed
    word[:-1] |= word[1:] << np.uint16(8)
    return ((word[byte] >> shift) & mask).astype(np.uint8)


def _frozen(*arrays):
    """The arrays, read-only (a cache shares them)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


# Where each code of a block lies depends only on the block's layout, and a run reuses few layouts (one after
# another): the positions are computed once per layout (read-only arrays).

@functools.lru_cache(maxsize=64)
def _channel_positions(tokens, bits_key):
    """(bytes of the block, then byte index, bit shift [tokens, channels] and mask [channels] of its codes) for a
    per-channel block with bit widths ``np.frombuffer(bits_key, np.int64)``. Checks the layout."""
    bits = np.frombuffer(bits_key, dtype=np.int64)
    off = channel_layout(tokens, bits)
    bit = off[:-1] * 8 + np.arange(tokens, dtype=np.int64)[:, None] * bits
    return (int(off[-1]),) + _frozen(bit >> 3, (bit & 7).astype(np.uint16), ((1 << bits) - 1).astype(np.uint16))


@functools.lru_cache(maxsize=64)
def _token_positions(tokens, channels, group_channels, bits):
    """Byte index and bit shift [tokens, channels] and mask of the codes of a per-token block whose layout the
    caller has checked (token_layout)."""
    groups = channels // group_channels
    stream = np.arange(tokens * groups, dtype=np.int64)[:, None] * (8 * stream_bytes(group_channels, bits))
    bit = (stream + np.arange(group_channels, dtype=np.int64) * bits).reshape(tokens, channels)
    return _frozen(bit >> 3, (bit & 7).astype(np.uint16)) + (np.uint16((1 << bits) - 1),)


def pack_channel_codes(codes, bits):
    """codes [tokens, channels] -> per-channel block bytes (codes already checked)."""
    tokens = codes.shape[0]
    off = channel_offsets(tokens, bits)
    out = np.zeros(int(off[-1]), dtype=np.uint8)
    for b in np.unique(bits):
        chans = np.flatnonzero(bits == b)
        streams = _pack_streams(codes[:, chans].T, int(b))
        out[off[chans][:, None] + np.arange(streams.shape[1])] = streams
    return out


def unpack_channel_codes(packed, tokens, bits):
    """Per-channel block bytes (length checked) -> codes [tokens, channels]."""
    _, byte, shift, mask = _channel_positions(tokens, np.asarray(bits, dtype=np.int64).tobytes())
    return _read_codes(packed, byte, shift, mask)


def pack_token_codes(codes, group_channels, bits):
    tokens, channels = codes.shape
    return _pack_streams(codes.reshape(tokens * (channels // group_channels), group_channels), bits).reshape(-1)


def unpack_token_codes(packed, tokens, channels, group_channels, bits):
    return _read_codes(packed, *_token_positions(tokens, channels, group_channels, bits))


# ---------------------------------------------------------------------------------------------------------------
# Group quantization (compute/GroupQuantizer, compute/OneBitLevels).

def scale_levels(bits):
    """The divisor of a b-bit group's range: 2^b - 1 levels above the min."""
    return (np.int64(1) << np.asarray(bits, dtype=np.int64)) - 1


def _half_checked(v, what):
    h = to_half_bits(v)
    bad = np.isinf(from_half_bits(h))
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(-1))[0])
        raise InvalidArgument("group " + what + " " + repr(float(np.asarray(v).reshape(-1)[i]))
                              + " overflows fp16: the group's range is too wide")
    return h


def _first_zero(g, m):
    """m with each zero replaced by the group's first zero (+0.0 or -0.0): plain comparisons keep the first of
    equal values, so the sign of a zero min or max is that of the first zero in the group."""
    zero = m == 0
    if not zero.any():
        return m
    first = np.argmax(g == 0, axis=1)
    return np.where(zero, g[np.arange(g.shape[0]), first], m)


def _seq_sum(a):
    """Row sums in ascending index order starting from +0.0, as a Java loop computes them."""
    if a.shape[1] == 0:
        return np.zeros(a.shape[0])
    return np.cumsum(a, axis=1)[:, -1] + 0.0


def _quantize_min_max(g, bits, levels_for_scale):
    levels = scale_levels(bits)
    mn = _first_zero(g, g.min(axis=1))
    mx = _first_zero(g, g.max(axis=1))
    with np.errstate(over="ignore", invalid="ignore"):
        scale_raw = (mx - mn) / levels_for_scale.astype(np.float64)
    scale_bits = _half_checked(scale_raw, "scale")
    zero_bits = _half_checked(mn, "zero")
    scale = from_half_bits(scale_bits)
    zero = from_half_bits(zero_bits)
    nz = scale != 0.0
    codes = np.zeros(g.shape, dtype=np.int64)
    if nz.any():
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            r = np.rint((g[nz] - zero[nz, None]) / scale[nz, None])
        r = np.maximum(0.0, np.minimum(levels[nz, None].astype(np.float64), r))
        codes[nz] = r.astype(np.int64)
    return codes, scale_bits, zero_bits


def _quantize_two_level(g):
    count = g.shape[1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        mean = _seq_sum(g) / count
        high_mask = g >= mean[:, None]
        high_sum = _seq_sum(np.where(high_mask, g, 0.0))
        low_sum = _seq_sum(np.where(high_mask, 0.0, g))
        low_count = count - high_mask.sum(axis=1)
        high = high_sum / (count - low_count)
        low = low_sum / low_count
        one_level = low_count == 0  # every value equals the mean: one level, scale 0
        zero_bits = _half_checked(np.where(one_level, high, low), "zero")
        scale_bits = np.zeros(g.shape[0], dtype=np.uint16)
        two = ~one_level
        if two.any():
            scale_bits[two] = _half_checked(high[two] - low[two], "scale")
    zero_scale = from_half_bits(scale_bits) == 0.0
    codes = (high_mask & ~zero_scale[:, None]).astype(np.int64)
    return codes, scale_bits, zero_bits


def quantize_groups(g, bits, one_bit, scale_levels_fn=None):
    """Quantizes each row of g [groups, count] (float64) with bits [groups] bits.

    Returns codes [groups, count] (int64), fp16 scale bits and fp16 zero bits [groups] (uint16).
    ``scale_levels_fn(bits)`` is the divisor of a min/max group's range (default: 2^b - 1, ``scale_levels``);
    codes are clamped to the b-bit range either way.
    """
    g = np.ascontiguousarray(g, dtype=np.float64)
    bits = np.asarray(bits, dtype=np.int64)
    n, count = g.shape
    if count <= 0:
        raise InvalidArgument("a quantization group needs at least one value, got " + str(count))
    _require_bits("group", bits)
    codes = np.zeros((n, count), dtype=np.int64)
    scale_bits = np.zeros(n, dtype=np.uint16)
    zero_bits = np.zeros(n, dtype=np.uint16)
    two_level = (bits == 1) if one_bit == "conditional_means" else np.zeros(n, dtype=bool)
    fn = scale_levels if scale_levels_fn is None else scale_levels_fn
    for sel, quantize in ((two_level, None), (~two_level, fn)):
        if not sel.any():
            continue
        if quantize is None:
            c, s, z = _quantize_two_level(g[sel])
        else:
            c, s, z = _quantize_min_max(g[sel], bits[sel], np.asarray(quantize(bits[sel]), dtype=np.int64))
        codes[sel] = c
        scale_bits[sel] = s
        zero_bits[sel] = z
    return codes, scale_bits, zero_bits


def meta_bytes(scale_bits, zero_bits):
    """4 bytes per group: fp16 scale then fp16 zero, little-endian."""
    m = np.empty((scale_bits.size, 2), dtype="<u2")
    m[:, 0] = scale_bits.reshape(-1)
    m[:, 1] = zero_bits.reshape(-1)
    return m.reshape(-1).view(np.uint8).copy()


def meta_halfs(meta):
    """(scale, zero) float64 per group of a metadata buffer."""
    h = np.ascontiguousarray(meta, dtype=np.uint8).view("<f2").astype(np.float64).reshape(-1, 2)
    return h[:, 0], h[:, 1]


def quantize_channel_block(x, bits, one_bit, scale_levels_fn=None):
    """x [tokens, channels] float64, bits [channels] -> (packed codes, meta) uint8."""
    codes, s, z = quantize_groups(x.T, bits, one_bit, scale_levels_fn)
    return pack_channel_codes(codes.T, bits), meta_bytes(s, z)


def quantize_token_block(x, group_channels, bits, one_bit, scale_levels_fn=None):
    """x [tokens, channels] float64 -> (packed codes, meta) uint8."""
    tokens, channels = x.shape
    n = tokens * (channels // group_channels)
    codes, s, z = quantize_groups(x.reshape(n, group_channels), np.full(n, bits), one_bit, scale_levels_fn)
    return pack_token_codes(codes.reshape(tokens, channels), group_channels, bits), meta_bytes(s, z)


# ---------------------------------------------------------------------------------------------------------------
# Dequantization: value = zero + code*scale, in float64 or (attention at f32) float32 arithmetic.

def _levels(codes, scale, zero, dtype):
    """zero + code*scale: one rounded multiply, then one rounded add, in dtype (codes are exact in either)."""
    out = np.multiply(codes, scale.astype(dtype, copy=False), dtype=dtype)
    out += zero.astype(dtype, copy=False)
    return out


def dequantize_channel_block(codes, meta, tokens, bits, dtype=np.float64):
    """A per-channel block (mechspec's layout) -> [tokens, channels] of dtype. Checks the layout."""
    bits = np.asarray(bits, dtype=np.int64)
    channels = bits.size
    _require_bytes("per-channel metadata", meta.size, 4 * channels)
    size, byte, shift, mask = _channel_positions(tokens, bits.tobytes())  # checks the layout
    _require_bytes("packed per-channel codes", codes.size, size)
    c = _read_codes(codes, byte, shift, mask)
    scale, zero = meta_halfs(meta)
    return _levels(c, scale[None, :], zero[None, :], dtype)


def dequantize_token_block(codes, meta, tokens, channels, group_channels, bits, dtype=np.float64):
    """A per-token block (mechspec's layout) -> [tokens, channels] of dtype. Checks the layout."""
    groups = token_layout(tokens, channels, group_channels, bits)
    _require_bytes("per-token metadata", meta.size, 4 * tokens * groups)
    _require_bytes("packed per-token codes", codes.size, tokens * groups * stream_bytes(group_channels, bits))
    c = unpack_token_codes(codes, tokens, channels, group_channels, bits).reshape(tokens, groups, group_channels)
    scale, zero = meta_halfs(meta)
    v = _levels(c, scale.reshape(tokens, groups, 1), zero.reshape(tokens, groups, 1), dtype)
    return v.reshape(tokens, channels)


# How attend and decode read a quantized group's keys ("per_channel") and values ("per_token"), looked up at call
# time. Signatures: per_channel(codes, meta, tokens, bits, dtype), per_token(codes, meta, tokens, channels,
# group_channels, bits, dtype); codes and meta are flat uint8 arrays, the result [tokens, channels] of dtype
# (float64, or float32 computed in float32 arithmetic). Each checks its block's layout.
DEQUANTIZERS = {
    "per_channel": dequantize_channel_block,
    "per_token": dequantize_token_block,
}


# ---------------------------------------------------------------------------------------------------------------
# The exact operations.

def pack_per_channel(inputs, params, precision):
    _exact(precision)
    _only(inputs, ("codes", "bits"))
    codes = _int_tensor(inputs, "codes", 2)
    bits = _int_tensor(inputs, "bits", 1)
    channel_layout(codes.shape[0], bits)
    if codes.shape[1] != bits.size:
        raise InvalidArgument("codes have shape " + str(list(codes.shape)) + ", bits need " + str(bits.size)
                              + " channels")
    _check_codes(codes, bits)
    return {"packed": pack_channel_codes(codes, bits)}


def unpack_per_channel(inputs, params, precision):
    _exact(precision)
    _only(inputs, ("packed", "bits"))
    packed = _bytes_tensor(inputs, "packed")
    bits = _int_tensor(inputs, "bits", 1)
    tokens = _int_param(params, "tokens")
    off = channel_layout(tokens, bits)
    _require_bytes("packed per-channel codes", packed.size, int(off[-1]))
    return {"codes": unpack_channel_codes(packed, tokens, bits).astype(np.int32)}


def pack_per_token(inputs, params, precision):
    _exact(precision)
    _only(inputs, ("codes",))
    codes = _int_tensor(inputs, "codes", 2)
    group_channels = _int_param(params, "group_channels")
    bits = _int_param(params, "bits")
    tokens, channels = codes.shape
    token_layout(tokens, channels, group_channels, bits)
    _check_codes(codes, np.full(channels, bits, dtype=np.int64))
    return {"packed": pack_token_codes(codes, group_channels, bits)}


def unpack_per_token(inputs, params, precision):
    _exact(precision)
    _only(inputs, ("packed",))
    packed = _bytes_tensor(inputs, "packed")
    tokens = _int_param(params, "tokens")
    channels = _int_param(params, "channels")
    group_channels = _int_param(params, "group_channels")
    bits = _int_param(params, "bits")
    groups = token_layout(tokens, channels, group_channels, bits)
    _require_bytes("packed per-token codes", packed.size, tokens * groups * stream_bytes(group_channels, bits))
    return {"codes": unpack_token_codes(packed, tokens, channels, group_channels, bits).astype(np.int32)}


def quantize_per_channel(inputs, params, precision, scale_levels_fn=None):
    """``scale_levels_fn(bits)``: the divisor of a min/max group's range (default ``scale_levels``: 2^b - 1)."""
    _exact(precision)
    _only(inputs, ("x", "bits"))
    x = _float_tensor(inputs, "x", 2, np.float64)
    bits = _int_tensor(inputs, "bits", 1)
    one_bit = _one_bit_param(params)
    channel_layout(x.shape[0], bits)
    if x.shape[1] != bits.size:
        raise InvalidArgument("x has shape " + str(list(x.shape)) + ", bits need " + str(bits.size) + " channels")
    codes, meta = quantize_channel_block(x, bits, one_bit, scale_levels_fn)
    return {"codes": codes, "meta": meta}


def quantize_per_token(inputs, params, precision, scale_levels_fn=None):
    """``scale_levels_fn`` as in ``quantize_per_channel``."""
    _exact(precision)
    _only(inputs, ("x",))
    x = _float_tensor(inputs, "x", 2, np.float64)
    group_channels = _int_param(params, "group_channels")
    bits = _int_param(params, "bits")
    one_bit = _one_bit_param(params)
    token_layout(x.shape[0], x.shape[1], group_channels, bits)
    codes, meta = quantize_token_block(x, group_channels, bits, one_bit, scale_levels_fn)
    return {"codes": codes, "meta": meta}


def dequantize_per_channel(inputs, params, precision, dequantizers=None):
    """``dequantizers``: how to read a block (default ``DEQUANTIZERS``, looked up at call time)."""
    _exact(precision)
    _only(inputs, ("codes", "meta", "bits"))
    codes = _bytes_tensor(inputs, "codes")
    meta = _bytes_tensor(inputs, "meta")
    bits = _int_tensor(inputs, "bits", 1)
    tokens = _int_param(params, "tokens")
    deq = DEQUANTIZERS if dequantizers is None else dequantizers
    return {"x": deq["per_channel"](codes, meta, tokens, bits, np.float64)}


def dequantize_per_token(inputs, params, precision, dequantizers=None):
    """``dequantizers`` as in ``dequantize_per_channel``."""
    _exact(precision)
    _only(inputs, ("codes", "meta"))
    codes = _bytes_tensor(inputs, "codes")
    meta = _bytes_tensor(inputs, "meta")
    tokens = _int_param(params, "tokens")
    channels = _int_param(params, "channels")
    group_channels = _int_param(params, "group_channels")
    bits = _int_param(params, "bits")
    deq = DEQUANTIZERS if dequantizers is None else dequantizers
    return {"x": deq["per_token"](codes, meta, tokens, channels, group_channels, bits, np.float64)}


# ---------------------------------------------------------------------------------------------------------------
# Attention over the cache (pnmix/PackedKvCache, CpuPackedCacheOps.attend).

FP16_BUFFERS = ("sink_keys", "sink_values", "residual_keys", "residual_values")
GROUP_TENSORS = ("key_codes", "key_meta", "key_bits", "value_codes", "value_meta")


def cache_tensor_names(params):
    """The input tensors of the cache the params describe."""
    groups = _int_param(params, "groups", 0)
    return FP16_BUFFERS + tuple("group." + str(g) + "." + t for g in range(groups) for t in GROUP_TENSORS)


def cache_layout(inputs, params):
    """The cache's shape from its params and fp16 buffers, checked: a dict with ``kv_heads``, ``head_dim``,
    ``sink_tokens``, ``residual_tokens``, ``groups``, ``group_tokens``, ``value_bits``, ``value_group_channels``,
    ``length`` and ``fp16`` (the four fp16 buffers as [tokens, channels] float16 views)."""
    kv_heads = _int_param(params, "kv_heads")
    head_dim = _int_param(params, "head_dim")
    if kv_heads <= 0 or head_dim <= 0:
        raise InvalidArgument("kvHeads and headDim must be positive, got " + str(kv_heads) + ", " + str(head_dim))
    channels = kv_heads * head_dim
    sink_tokens = _int_param(params, "sink_tokens", 0)
    residual_tokens = _int_param(params, "residual_tokens", 0)
    groups = _int_param(params, "groups", 0)
    fp16 = {}
    for name, tokens in zip(FP16_BUFFERS, (sink_tokens, sink_tokens, residual_tokens, residual_tokens)):
        b = _bytes_tensor(inputs, name, None)  # fp16 [tokens, kv_heads, head_dim] as bytes, any shape
        _require_bytes(name, b.size, 2 * tokens * channels)
        fp16[name] = b.view("<f2").reshape(tokens, channels)
    group_tokens = value_bits = value_group_channels = 0
    if groups > 0:
        group_tokens = _int_param(params, "group_tokens")
        value_bits = _int_param(params, "value_bits")
        value_group_channels = _int_param(params, "value_group_channels")
        _require_bits("valueBits", value_bits)
        token_layout(1, channels, value_group_channels, value_bits)
        if group_tokens <= 0:
            raise InvalidArgument("groupTokens must be positive, got " + str(group_tokens))
    return {"kv_heads": kv_heads, "head_dim": head_dim, "sink_tokens": sink_tokens, "residual_tokens": residual_tokens,
            "groups": groups, "group_tokens": group_tokens, "value_bits": value_bits,
            "value_group_channels": value_group_channels,
            "length": sink_tokens + groups * group_tokens + residual_tokens, "fp16": fp16}


def cache_blocks(inputs, layout, part, dtype, dequantizers=None):
    """The cache's keys (``part`` "keys") or values ("values") one block at a time, in position order: the fp16 sink,
    each quantized group, the fp16 residual. Yields (first position, [tokens, kv_heads, head_dim] array of dtype); a
    group is dequantized only when reached, through ``dequantizers`` (default ``DEQUANTIZERS``, looked up now), so a
    reader holds one group's dequantized tokens at a time, never the whole cache's."""
    deq = DEQUANTIZERS if dequantizers is None else dequantizers
    kv_heads, head_dim = layout["kv_heads"], layout["head_dim"]
    channels = kv_heads * head_dim
    fp16 = layout["fp16"]
    keys = part == "keys"
    shape = (-1, kv_heads, head_dim)
    at = 0
    sink = fp16["sink_keys" if keys else "sink_values"]
    if sink.shape[0] > 0:
        yield at, sink.astype(dtype).reshape(shape)
    at += sink.shape[0]
    group_tokens = layout["group_tokens"]
    for g in range(layout["groups"]):
        p = "group." + str(g) + "."
        if keys:
            key_bits = _int_tensor(inputs, p + "key_bits", 1)
            if key_bits.size != channels:
                raise InvalidArgument("group " + str(g) + " has " + str(key_bits.size) + " key bit widths, needs "
                                      + str(channels))
            block = deq["per_channel"](_bytes_tensor(inputs, p + "key_codes"), _bytes_tensor(inputs, p + "key_meta"),
                                       group_tokens, key_bits, dtype)
        else:
            block = deq["per_token"](_bytes_tensor(inputs, p + "value_codes"), _bytes_tensor(inputs, p + "value_meta"),
                                     group_tokens, channels, layout["value_group_channels"], layout["value_bits"], dtype)
        yield at, np.reshape(block, (group_tokens, channels)).reshape(shape)
        at += group_tokens
    residual = fp16["residual_keys" if keys else "residual_values"]
    if residual.shape[0] > 0:
        yield at, residual.astype(dtype).reshape(shape)


_SUM_CHUNK = 1 << 15  # products held at once by _ordered_matmul, so that they stay in cache


def _ordered_matmul(a, b, dtype, start=None):
    """a [n, r, m] @ b [n, m, c] in dtype, each sum over m in ascending order from +0.0 (or from ``start`` [n, r, c],
    so that a sum over consecutive blocks of m adds term by term, as one call over all of m would) with one rounded
    multiply and one rounded add per term, as the CPU twin's loops compute it (matmul and np.sum block or pair their
    adds, so their bits would depend on the sizes). The products come in chunks of whole terms, and the adds are one
    vectorized add per term across all the sums; rows go in blocks where one term of every sum would not fit."""
    n, r, m = a.shape
    c = b.shape[2]
    rows = max(1, _SUM_CHUNK // (n * c))
    if rows < r:
        return np.concatenate([_ordered_matmul(a[:, i:i + rows], b, dtype, None if start is None else start[:, i:i + rows])
                               for i in range(0, r, rows)], axis=1)
    at = np.ascontiguousarray(a.transpose(2, 0, 1))[:, :, :, None]  # [m, n, r, 1]
    bt = np.ascontiguousarray(b.transpose(1, 0, 2))[:, :, None, :]  # [m, n, 1, c]
    acc = np.zeros(n * r * c, dtype=dtype) if start is None else np.array(start, dtype=dtype).reshape(-1)
    step = max(1, _SUM_CHUNK // acc.size)
    terms = np.empty((min(step, m), n, r, c), dtype=dtype)
    for j in range(0, m, step):
        part = terms[:min(step, m - j)]
        np.multiply(at[j:j + step], bt[j:j + step], out=part)
        for t in part.reshape(part.shape[0], -1):
            acc += t
    return acc.reshape(n, r, c)


def blocked_attention(blocks, length, q, causal, dtype):
    """softmax(q·kᵀ/√d)·v per query head over keys and values that come a block at a time, in dtype's arithmetic.

    ``blocks(part)`` returns an iterator of (first position, [tokens, kv_heads, d] array) over the keys (``part``
    "keys") or the values ("values"), covering positions 0..length-1 in order; q [Hq, Tq, d]. Returns (out [Hq, Tq, d],
    logits [Hq, Tq, length] with -inf where a query may not see a key). Query head h reads KV head h / (Hq /
    kv_heads); causal: query i sees keys <= i + (length - Tq). Beside the logits and weights it holds one block at a
    time: the keys in a first pass, the values in a second.
    """
    hq, tq, d = q.shape
    if dtype == np.float32:
        scale = np.float32(1.0 / np.sqrt(d))
    else:
        scale = 1.0 / np.sqrt(float(d))
    logits = np.full((hq, tq, length), -np.inf, dtype=dtype)
    kv_heads = 1
    with np.errstate(invalid="ignore", over="ignore"):
        for at, k in blocks("keys"):
            n, kv_heads, _ = k.shape
            qg = q.reshape(kv_heads, hq // kv_heads * tq, d)
            # Dot products in ascending channel order, as the CPU twin sums them: the logits are its bits, so large
            # logits do not amplify a reordering's rounding.
            logits[:, :, at:at + n] = (_ordered_matmul(qg, k.transpose(1, 2, 0), dtype) * scale).reshape(hq, tq, n)
        if causal:
            hidden = np.arange(length)[None, :] > (np.arange(tq) + (length - tq))[:, None]
            logits[:, hidden] = -np.inf
        mx = logits.max(axis=2, keepdims=True)
        if dtype == np.float32:
            # (float) StrictMath.exp(s - max): the difference in float, the exponential in double.
            w = np.exp((logits - mx).astype(np.float64)).astype(np.float32)
        else:
            w = np.exp(logits - mx)
        denom = np.cumsum(w, axis=2)[:, :, -1:]  # ascending key order (masked weights are 0)
        w /= denom
        p = w.reshape(kv_heads, hq // kv_heads * tq, length)
    # Σ p·v in ascending key order, as the CPU twin sums it: a matmul's blocking depends on how many queries share
    # the call, so one query alone and in a batch could differ in the last bits (masked keys add exact zeros here);
    # each block's terms continue the sums the blocks before it left.
    out = np.zeros((kv_heads, hq // kv_heads * tq, d), dtype=dtype)
    for at, v in blocks("values"):
        out = _ordered_matmul(p[:, :, at:at + v.shape[0]], v.transpose(1, 0, 2), dtype, out)
    return out.reshape(hq, tq, d), logits


def _check_attention(layout, q_shape, causal, shown=None):
    """q [Hq, Tq, d] against the cache's layout: the Java twins' argument checks, in their words (``shown``: q's shape
    as the request gave it)."""
    hq, tq, d = q_shape
    kv_heads, length = layout["kv_heads"], layout["length"]
    if d != layout["head_dim"]:
        raise InvalidArgument("q has shape " + str(list(shown or q_shape)) + ", the cache's head_dim is "
                              + str(layout["head_dim"]))
    if hq <= 0 or hq % kv_heads != 0:
        raise InvalidArgument("queryHeads (" + str(hq) + ") must be a positive multiple of kvHeads ("
                              + str(kv_heads) + ")")
    if tq <= 0 or length == 0:
        raise InvalidArgument("attention needs queries and keys, got " + str(tq) + " queries over "
                              + str(length) + " cached tokens")
    if causal and tq > length:
        raise InvalidArgument("causal attention needs keyLen (" + str(length) + ") >= queryLen (" + str(tq) + ")")


def attend(inputs, params, precision, dequantizers=None):
    """``dequantizers``: how to read quantized groups (default ``DEQUANTIZERS``, looked up at call time)."""
    dtype = _dtype(precision)
    _only(inputs, cache_tensor_names(params) + ("q",))
    causal = _bool_param(params, "causal")
    with_logits = _bool_param(params, "with_logits", False)
    if with_logits and precision != "f64":
        raise InvalidArgument("with_logits is served at f64 only")
    q = _float_tensor(inputs, "q", 3, dtype)
    layout = cache_layout(inputs, params)
    _check_attention(layout, q.shape, causal)
    out, logits = blocked_attention(lambda part: cache_blocks(inputs, layout, part, dtype, dequantizers),
                                    layout["length"], q, causal, dtype)
    result = {"out": out}
    if with_logits:
        result["logits"] = logits
    return result


def decode(inputs, params, precision, dequantizers=None):
    """One decode step: attend with one query that sees every cached key. ``dequantizers`` as in ``attend``."""
    dtype = _dtype(precision)
    _only(inputs, cache_tensor_names(params) + ("q",))
    q = _float_tensor(inputs, "q", 2, dtype)
    layout = cache_layout(inputs, params)
    _check_attention(layout, (q.shape[0], 1, q.shape[1]), False, q.shape)
    q = q[:, None, :]
    out, _ = blocked_attention(lambda part: cache_blocks(inputs, layout, part, dtype, dequantizers),
                               layout["length"], q, False, dtype)
    return {"out": out[:, 0, :]}


EXACT = ["exact"]
BOTH = ["f64", "f32"]

OPERATIONS = {
    "pnmix.pack_per_channel": (pack_per_channel, EXACT),
    "pnmix.unpack_per_channel": (unpack_per_channel, EXACT),
    "pnmix.pack_per_token": (pack_per_token, EXACT),
    "pnmix.unpack_per_token": (unpack_per_token, EXACT),
    "pnmix.quantize_per_channel": (quantize_per_channel, EXACT),
    "pnmix.quantize_per_token": (quantize_per_token, EXACT),
    "pnmix.dequantize_per_channel": (dequantize_per_channel, EXACT),
    "pnmix.dequantize_per_token": (dequantize_per_token, EXACT),
    "pnmix.attend": (attend, BOTH),
    "pnmix.decode": (decode, BOTH),
}
