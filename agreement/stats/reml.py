"""REML fit of a linear model with two crossed random intercepts (no Django):

    y = X b + Z1 u + Z2 v + e,   u ~ N(0, t1 s2 I), v ~ N(0, t2 s2 I), e ~ N(0, s2 I)

what lme4 writes ``y ~ x + (1|first) + (1|second)``. The residual variance ``s2`` and the
fixed effects ``b`` are profiled out of the restricted likelihood, which leaves a smooth
function of the two variance ratios ``t1`` and ``t2`` (Bates, Mächler, Bolker and Walker
2015, section 3), minimised by L-BFGS-B with bounds at zero and an analytic gradient. The
ratios, not their square roots (lme4's ``theta``), are the parameters: the gradient at a
ratio of zero then says whether the optimum is there (in ``theta`` it is always zero).

Each evaluation needs the data only through a few small sums, computed once: the counts
per level of each factor and per pair of levels (``Z'Z``), ``Z'[X y]`` and ``[X y]'[X y]``.
With ``L`` the diagonal of the ratios' square roots (one entry per level) and
``A = I + L Z'Z L``, the marginal covariance is ``s2 (I + Z L L Z')``, whose inverse and
determinant follow from ``A`` (Woodbury). The second factor's block of ``A`` is diagonal,
so ``A`` is reduced to its Schur complement on the first factor's levels: one Cholesky of a
matrix as small as the smaller factor, never one of the ratings. Formulas:
docs/statistics.md.
"""

from dataclasses import dataclass

import numpy as np

# The optimiser's projected-gradient tolerance on the criterion (-2 x restricted log
# likelihood): the variances it leaves are within about 1e-8 of the optimum.
GTOL = 1e-9


@dataclass(frozen=True)
class CrossedFit:
    """A REML fit: the fixed effects, their covariance (``s2 (X'V^-1 X)^-1``), the two
    random-intercept variances and the residual one, the criterion at the optimum
    (-2 x restricted log likelihood) and whether the optimiser converged (with its word)."""

    fixed: np.ndarray
    covariance: np.ndarray
    variances: tuple[float, float]
    residual: float
    criterion: float
    converged: bool
    message: str


class _Design:
    """The sums an evaluation needs, for factors ``first`` (the smaller: its Schur block is
    dense) and ``second`` (codes 0..levels-1), the fixed effects ``x`` and the outcome."""

    def __init__(self, y: np.ndarray, x: np.ndarray, first: np.ndarray, second: np.ndarray):
        self.n, self.p = x.shape
        w = np.column_stack([x, y])
        q1, q2 = int(first.max()) + 1, int(second.max()) + 1
        self.d1 = np.bincount(first, minlength=q1).astype(float)
        self.d2 = np.bincount(second, minlength=q2).astype(float)
        self.cross = np.zeros((q1, q2))
        np.add.at(self.cross, (first, second), 1.0)
        self.z1w = np.zeros((q1, w.shape[1]))
        np.add.at(self.z1w, first, w)
        self.z2w = np.zeros((q2, w.shape[1]))
        np.add.at(self.z2w, second, w)
        self.ww = w.T @ w

    def evaluate(self, ratios: np.ndarray, gradient: bool = True):
        """(criterion, its gradient in the ratios, fixed effects, X'V0^-1 X, residual
        variance) at the variance ratios ``ratios``. Raises LinAlgError where a matrix is
        singular."""
        t1, t2 = float(ratios[0]), float(ratios[1])
        s1, s2 = np.sqrt(t1), np.sqrt(t2)
        n, p = self.n, self.p
        g = 1.0 / (1.0 + t2 * self.d2)  # the inverse of A's diagonal second block
        ng = self.cross * g  # N diag(g)
        schur = np.diag(1.0 + t1 * self.d1) - t1 * t2 * (ng @ self.cross.T)
        chol = np.linalg.cholesky(schur)  # S >= I (A >= I): well conditioned
        half = np.linalg.inv(chol)  # S^-1 = half' half
        b1, b2 = s1 * self.z1w, s2 * self.z2w  # L Z'[X y], by block
        c = b1 - s1 * s2 * (ng @ b2)
        x1 = half.T @ (half @ c)  # A^-1 L Z'[X y], first block
        x2 = g[:, None] * (b2 - s1 * s2 * (self.cross.T @ x1))  # and second
        m = self.ww - b1.T @ x1 - b2.T @ x2  # [X y]' V0^-1 [X y], V0 = V / s2
        xvx, xvy = m[:p, :p], m[:p, p]
        xvx_chol = np.linalg.cholesky(xvx)
        xvx_inv = np.linalg.inv(xvx)
        fixed = xvx_inv @ xvy
        r = float(m[p, p] - xvy @ fixed)
        log_a = -np.log(g).sum() + 2 * np.log(np.diag(chol)).sum()
        log_x = 2 * np.log(np.diag(xvx_chol)).sum()
        criterion = log_a + log_x + (n - p) * (1 + np.log(2 * np.pi * r / (n - p)))
        if not gradient:
            return criterion, None, fixed, xvx, r / (n - p)
        # Z_j' V0^-1 [X y] per factor; with [-b; 1] it is Z_j' P y (P the REML projection).
        f1 = self.z1w - s1 * (self.d1[:, None] * x1) - s2 * (self.cross @ x2)
        f2 = self.z2w - s1 * (self.cross.T @ x1) - s2 * (self.d2[:, None] * x2)
        # tr(Z_j' V0^-1 Z_j) = tr(Z_j'Z_j) - tr(B' A^-1 B), B = L Z'Z_j, by blocks.
        ngn = ng @ self.cross.T
        e1 = s1 * (np.diag(self.d1) - t2 * ngn)
        trace1 = self.d1.sum() - t2 * np.trace(ngn) - _frobenius(half, e1)
        trace2 = self.d2.sum() - t2 * (g * self.d2**2).sum() - _frobenius(half, s1 * ng)
        direction = np.append(-fixed, 1.0)
        grad_t = np.empty(2)
        for j, (f, trace) in enumerate(((f1, trace1), (f2, trace2))):
            fx, fr = f[:, :p], f @ direction
            grad_t[j] = trace - np.sum(xvx_inv * (fx.T @ fx)) - (n - p) * (fr @ fr) / r
        return criterion, grad_t, fixed, xvx, r / (n - p)


# The matrices are small: one inverse of the Cholesky factor per evaluation, then products,
# costs less than a solver's call per product (its checks of its arguments dominated).
def _frobenius(half: np.ndarray, matrix: np.ndarray) -> float:
    """tr(M' S^-1 M) for ``half`` the inverse of S's lower Cholesky factor."""
    product = half @ matrix
    return float((product * product).sum())


def fit_crossed(y, x, first, second) -> CrossedFit:
    """The REML fit of ``y`` on the columns of ``x`` with random intercepts for the levels
    of ``first`` and ``second`` (codes 0..levels-1; every level used). Raises LinAlgError
    for a singular design."""
    y, x = np.asarray(y, float), np.asarray(x, float)
    first, second = np.asarray(first, int), np.asarray(second, int)
    swap = first.max() > second.max()  # the smaller factor takes the dense block
    design = _Design(y, x, *((second, first) if swap else (first, second)))

    from scipy import optimize  # here, not at the top: a web process never loads scipy

    def objective(ratios):
        value, grad, *_ = design.evaluate(ratios)
        return value, grad

    result = optimize.minimize(
        objective,
        np.ones(2),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * 2,
        options={"gtol": GTOL, "ftol": 1e-15, "maxiter": 500},
    )
    criterion, grad, fixed, xvx, residual = design.evaluate(result.x)
    # L-BFGS-B may stop on its line search at the optimum: the projected gradient says
    # whether it is (zero, or pointing out of the bounds at a ratio of zero).
    free = (result.x > 0) | (grad < 0)
    stationary = np.all(np.abs(grad[free]) <= 1e-5 * max(1.0, abs(criterion)))
    ratios = result.x[::-1] if swap else result.x
    return CrossedFit(
        fixed=fixed,
        covariance=residual * np.linalg.inv(xvx),
        variances=(float(ratios[0] * residual), float(ratios[1] * residual)),
        residual=float(residual),
        criterion=float(criterion),
        converged=bool(result.success or stationary) and bool(np.isfinite(criterion)),
        message=str(result.message),
    )
