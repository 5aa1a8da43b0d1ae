"""fold-bias's fits and kernels (protocols.md, fold-bias), fp64: NNLS, least squares, fold direction, rank-one fold, key selection."""
import numpy as np

from mechspec_worker import InvalidArgument, Singular
from reference import only, param, positive, shape, tensor

F64 = np.float64

# A KKT matrix with a 2-norm condition number beyond this is treated as singular (foldbias/FoldDirection.java).
MAX_CONDITION = 1e12


def _lstsq(x, y):
    # SVD least squares: the minimum-norm solution, which is the unique one when x has full column rank.
    return np.linalg.lstsq(x, y, rcond=None)[0]


def nnls(inputs, params, precision):
    """w = argmin_{w ≥ 0} ‖a·w − b‖₂ by Lawson–Hanson's active-set method (entering ties to the lower index)."""
    only(inputs, "a", "b")
    a = tensor(inputs, "a", F64, 2)
    b = tensor(inputs, "b", F64, 1)
    rows, cols = a.shape
    positive(rows=rows, cols=cols)
    shape("b", b, (rows,))
    # MATLAB lsqnonneg's default tolerance, 10·eps·‖a‖₁·max(rows, cols): the rounding noise of a gradient entry
    # aᵀ(b − a·w). An entering gradient must exceed it, and a passive weight at or below it is zero. The same as
    # mechspec's Nnls.java, so both stop at the same active set.
    tol = 10 * np.finfo(F64).eps * np.abs(a).sum(axis=0).max() * max(rows, cols)
    w = np.zeros(cols)
    passive = np.zeros(cols, dtype=bool)
    # A column that enters and leaves at once, w unchanged, is numerically dependent on the passive ones (the
    # textbook method cycles on it when a is rank-deficient to rounding); it may not enter again until w moves.
    dependent = np.zeros(cols, dtype=bool)
    for outer in range(3 * cols + 1):
        grad = a.T @ (b - a @ w)  # minus half the gradient of ‖a·w − b‖²
        candidates = np.where(~passive & ~dependent & (grad > tol), grad, -np.inf)
        enter = int(np.argmax(candidates))  # argmax takes the first of equal maxima: the lower index
        if candidates[enter] == -np.inf:
            return {"w": w}
        if outer == 3 * cols:
            break
        passive[enter] = True
        before = w.copy()
        for _ in range(3 * cols + 1):
            z = np.zeros(cols)
            z[passive] = _lstsq(a[:, passive], b)
            blocked = passive & (z <= 0)
            if not blocked.any():
                w = z
                break
            # Step from w towards z until the first passive weight reaches zero (0/0 steps are no step).
            with np.errstate(all="ignore"):
                steps = np.where(blocked, w / (w - z), np.inf)
            steps[np.isnan(steps)] = np.inf
            blocking = int(np.argmin(steps))
            if steps[blocking] == np.inf:
                w = z
                break
            w = w + steps[blocking] * (z - w)
            w[blocking] = 0.0
            leave = passive & (w <= tol)
            passive[leave] = False
            w[leave] = 0.0
        else:
            raise ArithmeticError(f"NNLS (Lawson–Hanson) inner loop did not converge in {3 * cols} steps")
        if not passive[enter] and np.array_equal(w, before):
            dependent[enter] = True
        else:
            dependent[:] = False
    raise ArithmeticError(f"NNLS (Lawson–Hanson) did not converge in {3 * cols} outer iterations")


def least_squares(inputs, params, precision):
    """w = argmin ‖x·w − y‖_F."""
    only(inputs, "x", "y")
    x = tensor(inputs, "x", F64, 2)
    y = tensor(inputs, "y", F64, 2)
    rows, cols = x.shape
    positive(rows=rows, cols=cols, ycols=y.shape[1])
    shape("y", y, (rows, y.shape[1]))
    w = _lstsq(x, y)
    if not np.all(np.isfinite(w)):
        raise ArithmeticError("least squares gave a non-finite solution")
    return {"w": np.ascontiguousarray(w)}


def fold_direction(inputs, params, precision):
    """u minimizing Σᵢ(aᵢ·u − 1)² + λ‖u‖² subject to meanᵢ(aᵢ·u) = 1, from its KKT system
    [[2(AᵀA + λI), ā], [āᵀ, 0]]·[u; ν] = [2Aᵀ1; 1], ā the mean row."""
    only(inputs, "a")
    a = tensor(inputs, "a", F64, 2)
    rows, d = a.shape
    positive(rows=rows, d=d)
    lam = param(params, "lambda", float)
    if not np.isfinite(lam):
        raise InvalidArgument(f"lambda must be finite, got {lam}")
    mean = a.sum(axis=0) / rows
    m = np.zeros((d + 1, d + 1))
    m[:d, :d] = 2 * (a.T @ a) + 2 * lam * np.eye(d)
    m[:d, d] = mean
    m[d, :d] = mean
    rhs = np.append(2 * a.sum(axis=0), 1.0)
    condition = np.linalg.cond(m)  # 2-norm: σ_max / σ_min
    if not condition <= MAX_CONDITION:
        raise Singular(f"singular KKT system for the fold direction (2-norm condition number {condition} > "
                       f"{MAX_CONDITION}; mean reference query |a| = {np.linalg.norm(mean)}, lambda = {lam})")
    u = np.linalg.solve(m, rhs)[:d]
    if not np.all(np.isfinite(u)):
        raise Singular("singular KKT system for the fold direction: the solution is not finite")
    return {"u": u}


def rank_one_fold(inputs, params, precision):
    """folded_keys[j] = compact_keys[j] + beta[j]·u: NumPy rounds the product array, then the sum (no fma)."""
    only(inputs, "compact_keys", "beta", "u")
    ck = tensor(inputs, "compact_keys", F64, 2)
    beta = tensor(inputs, "beta", F64, 1)
    u = tensor(inputs, "u", F64, 1)
    t, d = ck.shape
    positive(t=t, d=d)
    shape("beta", beta, (t,))
    shape("u", u, (d,))
    product = beta[:, None] * u[None, :]
    return {"folded_keys": ck + product}


def select_keys(inputs, params, precision):
    """The t keys with the largest maximum weight over the queries (ties to the lower index), in increasing order."""
    only(inputs, "weights")
    weights = tensor(inputs, "weights", F64, 2)
    queries, keys = weights.shape
    t = param(params, "t", int)
    if t > keys:
        raise InvalidArgument(f"t = {t} exceeds the {keys} keys")
    if t < 0:
        raise InvalidArgument(f"t must be non-negative, got {t}")
    score = weights.max(axis=0) if queries else np.full(keys, -np.inf)
    # Order as Java's Double.compare does (−0.0 below +0.0): the float's bits made monotone as int64.
    bits = score.view(np.int64)
    key = np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)
    order = np.argsort(-key, kind="stable")  # stable: equal scores keep increasing index order
    return {"indices": np.sort(order[:t]).astype(np.int64)}


OPERATIONS = {
    "foldbias.nnls": (nnls, ("f64",)),
    "foldbias.least_squares": (least_squares, ("f64",)),
    "foldbias.fold_direction": (fold_direction, ("f64",)),
    "foldbias.rank_one_fold": (rank_one_fold, ("f64",)),
    "foldbias.select_keys": (select_keys, ("f64",)),
}
