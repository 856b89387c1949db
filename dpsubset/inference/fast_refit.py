"""The refit mechanism rerun on bootstrap data: many draws at once, without the certificate.

The parametric bootstrap (:mod:`dpsubset.inference.bootstrap`) reruns the release's refit
(objective perturbation, docs/methods/refit.md) hundreds of times on simulated rows. Those
refits are never released: they only have to reproduce the distribution of the refit
mechanism's output. So this module solves the same perturbed problem (the same ball of
radius r, the same ridge ``Delta = 2 lambda / eps``, the same noise law for b and, for the
iterative losses, the same output noise w) to the same accuracy (``d_max``), but

* without the rounding certificate of :mod:`dpsubset.refit.certificate` (correctly rounded
  sums, proven eigenvalue bounds, exact ball placement): it is what makes the *released*
  refit private, and it is most of the cost of a certified solve;
* for many draws at once: the Gram matrices of least squares and the Newton steps of the
  other losses are batched numpy operations over a chunk of simulated data sets, and the
  small d x d systems are solved by numpy's batched ``linalg.solve``;
* for the iterative losses, from a warm start at the simulation's true coefficients
  (the perturbed objective is strictly convex, so its minimiser does not depend on the
  start; only the number of Newton steps does).

``tests/inference/test_inference.py`` checks on a few draws that the coefficients agree with the
certified :func:`~dpsubset.refit.objective.objective_perturbation` given the same noise.
Nothing here reads the data: its inputs are simulated rows (post-processing).
"""
from __future__ import annotations

import copy

import numpy as np

from ..refit.certificate import ball_qp
from ..refit.exact_grid import exact_grid_calibration, simulated_noise, simulated_output_noise
from ..refit.objective import (DEFAULT_MAX_ITER, calibrate, refit_loss, sample_noise,
                               sample_output_noise)
from ..losses import LogisticLoss, is_least_squares

__all__ = ["BootstrapRefit"]

#: A Newton step shorter than this fraction of r is in Newton's local regime and is taken
#: in full (as the certified solver does); longer steps are checked by Armijo backtracking.
_SHORT_STEP = 1e-6


def _into_ball(theta, r):
    """Rows of theta scaled into the ball (floating point; nothing is certified here)."""
    if np.isinf(r):  # the ball lifted (BootstrapRefit.without_ball)
        return theta
    nrm = np.linalg.norm(theta, axis=-1, keepdims=True)
    return np.where(nrm > r, theta * (r / np.maximum(nrm, 1e-300)), theta)


def _ball_step(H, q, r):
    """Minimisers of ``0.5 p'Hp - q'p`` over ``||p|| <= r`` for a batch of (H, q).

    Batched solve for all; the few whose unconstrained minimiser leaves the ball go
    through the mechanism's own ball solver, :func:`dpsubset.refit.certificate.ball_qp`.
    """
    p = np.linalg.solve(H, q[..., None])[..., 0]
    for i in np.flatnonzero(np.linalg.norm(p, axis=1) > r):
        p[i] = ball_qp(H[i], q[i], r)[0]
    return _into_ball(p, r)


class BootstrapRefit:
    """The release's refit, with its public settings, for batches of simulated data sets.

    Parameters
    ----------
    loss : {"squared", "huber", "logistic"}
    n : int
        Rows of each simulated data set (the release's public n).
    eps, row_bound, b_y, r, delta : float
        The refit's public settings (as :func:`~dpsubset.refit.objective.objective_perturbation`).
    loss_options : dict
        ``huber_h`` and the like.
    start : ndarray, optional
        Warm start of the Newton iterations (the simulation's truth).
    ball : float, optional
        Radius of the set the refit minimises over; default ``r``, the mechanism's. With
        ``numpy.inf`` the same perturbed objective (same ridge, same noise law, calibrated
        at ``r``) is minimised without the ball: the error of the refit were it free to
        leave the ball, which the intervals of a release on the sphere need
        (:mod:`dpsubset.inference.intervals`, docs/methods/inference.md).

    Notes
    -----
    ``refit.batch(A, y, rng)`` takes ``A`` of shape (m, n, d) and ``y`` of shape (m, n) and
    returns the m refits; ``refit(A, y, rng)`` is one draw.
    """

    def __init__(self, *, loss, n, eps, row_bound, b_y, r, delta, loss_options, start=None, ball=None):
        self.loss, self.n = loss, int(n)
        # r calibrates the noise (the mechanism's constants); the ball is where the minimum is sought
        self.r_noise = float(r)
        self.r = self.r_noise if ball is None else float(ball)
        self._settings = dict(eps=eps, row_bound=row_bound, b_y=b_y, r=r, delta=delta,
                              **{k: v for k, v in loss_options.items() if k in ("huber_h", "hinge_h")})
        self._lossobj = refit_loss(loss, b_y=b_y, huber_h=loss_options.get("huber_h"),
                                    hinge_h=loss_options.get("hinge_h"))
        self.start = None if start is None else np.asarray(start, dtype=float)
        # the released refit is the exact-grid one when pure (dpsubset/refit/exact_grid.py)
        self._exact = not delta

    def calibration(self, dim):
        """The public constants of the refit at dimension ``dim`` (the mechanism's own: the
        exact-grid refit when the refit is pure, ``delta = 0``; the Gaussian variant otherwise)."""
        if self._exact:
            settings = {k: v for k, v in self._settings.items() if k != "delta"}
            return exact_grid_calibration(self.loss, dim, **settings)
        return calibrate(self.loss, dim, **self._settings)

    def sphere_tolerance(self, dim):
        """How far below r a point of the sphere may appear after the output noise (public).

        The exact-grid refit adds Laplace-like noise of scale ``t_out g`` per coordinate
        (about 4e-6 sqrt(d) r / eps): 40 scales in each of sqrt(d) directions, exceeded with
        probability below d e^-40; the Gaussian variant's output noise is about 1e-8 r.
        """
        tol = 1e-6 * self.r_noise
        if self._exact:
            cal = self.calibration(dim)
            tol += 40.0 * np.sqrt(dim) * cal.out_t * cal.step
        return tol

    def _noise(self, rng, cal, m):
        """m copies of the objective's noise b, with the release's law."""
        return simulated_noise(rng, cal, m) if self._exact else sample_noise(rng, cal, size=m)

    def _output(self, theta, rng, cal, m):
        """The minimisers plus the release's output noise: the grid's for the exact-grid refit
        (every loss), the Gamma-norm one of the Gaussian variant's iterative losses."""
        if self._exact:
            return theta + simulated_output_noise(rng, cal, m)
        return theta if is_least_squares(self.loss) else theta + sample_output_noise(rng, cal, size=m)

    def __call__(self, A, y, rng):
        return self.batch(np.asarray(A, dtype=float)[None], np.asarray(y, dtype=float)[None], rng)[0]

    def batch(self, A, y, rng):
        """Refits of m simulated data sets, shape (m, d)."""
        m, _, dim = A.shape
        cal = self.calibration(dim)
        b = self._noise(rng, cal, m)  # drawn before the data are used, as the mechanism does
        if is_least_squares(self.loss):
            At = A.transpose(0, 2, 1)
            H = 2.0 * (At @ A) + cal.regularization * np.eye(dim)
            q = 2.0 * (At @ y[..., None])[..., 0] - b
            return self._output(_ball_step(H, q, self.r), rng, cal, m)
        return self._output(self._newton(A, y, b, cal), rng, cal, m)

    def row_derivatives(self, eta, y):
        """Each row's first and second derivative of the loss in its linear predictor ``eta``
        (``-2 (y - eta)`` and 2 for least squares, whose closed form reads ``2 A'A`` and
        ``2 A'y``): the weights of :func:`~dpsubset.inference.bootstrap.simulate_statistics`."""
        if is_least_squares(self.loss):
            return -2.0 * (y - eta), np.full_like(eta, 2.0)
        return self._derivs_at(eta, y)

    def batch_statistics(self, H, g, start, rng):
        """Refits of m simulated data sets given the sums of their rows' loss derivatives at
        ``start`` (shape (d,) or (m, d): the expansion points of
        :func:`~dpsubset.inference.bootstrap.simulate_statistics`): ``H = sum w2 a a'``,
        ``g = sum w1 a``.

        The perturbed objective ``sum loss + Delta/2 ||theta||^2 + b'theta`` is minimised over
        the ball in its quadratic expansion at ``start``: for least squares that is the
        objective itself (the same minimiser as :meth:`batch`), for the other losses one
        Newton step from the expansion point, to which the refit is asymptotically equivalent
        (docs/methods/inference.md, "Inference without simulating rows"); the output noise
        of the iterative losses follows, as in :meth:`batch`.

        Returns
        -------
        ndarray, shape (m, d)
        """
        m, dim = g.shape
        cal = self.calibration(dim)
        b = self._noise(rng, cal, m)
        Ht = H + cal.regularization * np.eye(dim)
        start = np.broadcast_to(np.asarray(start, dtype=float), (m, dim))
        grad = g + cal.regularization * start + b
        theta = _ball_step(Ht, (Ht @ start[..., None])[..., 0] - grad, self.r)
        return self._output(theta, rng, cal, m)

    def without_ball(self):
        """The same refit (ridge, noise law, start) minimised without the ball."""
        free = copy.copy(self)
        free.r = np.inf
        return free

    def hessian(self, A, y, theta):
        """Hessian of the perturbed objective at ``theta`` on one data set, shape (d, d).

        ``2 A'A + Delta I`` for least squares, ``A' diag(phi'') A + Delta I`` otherwise (the
        objective's linear noise term has none).
        """
        A, y = np.asarray(A, dtype=float), np.asarray(y, dtype=float)
        dim = A.shape[1]
        Delta = self.calibration(dim).regularization
        if is_least_squares(self.loss):
            return 2.0 * (A.T @ A) + Delta * np.eye(dim)
        _, d2 = self._derivs(A[None], y[None], np.asarray(theta, dtype=float)[None])
        return (A * d2[0][:, None]).T @ A + Delta * np.eye(dim)

    def _derivs(self, A, y, theta):
        """phi' and phi'' of every row at theta (per draw); no loss values (not needed)."""
        return self._derivs_at((A @ theta[..., None])[..., 0], y)

    def _derivs_at(self, eta, y):
        """phi' and phi'' of rows with linear predictor eta and response y (any shape)."""
        sc = self._lossobj.scale
        if isinstance(self._lossobj.loss, LogisticLoss):
            # one exp per row: sigma(z) and sigma(z) sigma(-z) for z = -y eta
            z = -y * eta
            e = np.exp(-np.abs(z))
            inv = 1.0 / (1.0 + e)
            sig = np.where(z >= 0, inv, e * inv)
            return -y * sig * sc, e * inv * inv * sc
        _, d1, d2 = self._lossobj.loss.all_derivatives(eta, y)
        return sc * d1, sc * d2

    def _objective(self, A, y, theta, b, Delta):
        """The perturbed objective at theta (per draw): only when a step needs checking."""
        eta = (A @ theta[..., None])[..., 0]
        value = self._lossobj.phi(eta, y).sum(axis=1)
        return value + 0.5 * Delta * np.einsum("bd,bd->b", theta, theta) + np.einsum("bd,bd->b", b, theta)

    @staticmethod
    def _gradient(A, d1, theta, b, Delta):
        return (A.transpose(0, 2, 1) @ d1[..., None])[..., 0] + Delta * theta + b

    def _newton(self, A, y, b, cal):
        """Projected Newton on the ball, all draws at once, to the certified solver's d_max.

        A full Newton step that stays inside the ball and halves the gradient is taken (the
        gradient at the trial point is needed for the next step anyway); so is one that
        passes Armijo's test by convexity, ``F(trial) - F(theta) <= g(trial)'(trial - theta)``;
        any other long step is backtracked on the objective (Armijo). A draw stops
        when its last step or its gradient bound ``||g|| / lambda_min(H)`` (interior
        points) is below ``d_max / 10``.
        """
        m, _, dim = A.shape
        Delta, r, tol = cal.regularization, self.r, 0.1 * cal.d_max
        short = _SHORT_STEP * self.r_noise  # a finite scale even when the ball is lifted
        start = np.zeros(dim) if self.start is None or len(self.start) != dim else self.start
        theta = np.repeat(_into_ball(start[None], r), m, axis=0)
        d1, d2 = self._derivs(A, y, theta)
        active = np.arange(m)
        eye = np.eye(dim)
        for _ in range(DEFAULT_MAX_ITER):
            if active.size == 0:
                break
            full = active.size == m  # no copy of the chunk while every draw is still running
            X, Y = (A, y) if full else (A[active], y[active])
            th, bb, D1, D2 = theta[active], b[active], d1[active], d2[active]
            g = self._gradient(X, D1, th, bb, Delta)
            H = (X * D2[..., None]).transpose(0, 2, 1) @ X + Delta * eye
            step = _ball_step(H, (H @ th[..., None])[..., 0] - g, r) - th
            slope = np.einsum("bd,bd->b", g, step)
            t = np.ones(active.size)
            trial = _into_ball(th + step, r)
            N1, N2 = self._derivs(X, Y, trial)
            gt = self._gradient(X, N1, trial, bb, Delta)
            # a long step (> 1e-6 r) is taken in full when it lands inside the ball and cuts
            # the gradient (Newton's local regime); otherwise it must pass Armijo's test
            long_ = np.linalg.norm(step, axis=1) > short
            gnorm, gtnorm = np.linalg.norm(g, axis=1), np.linalg.norm(gt, axis=1)
            inside = np.linalg.norm(trial, axis=1) < r * (1.0 - 1e-9)
            newton_ok = inside & (gtnorm <= 0.5 * gnorm)
            convex_ok = np.einsum("bd,bd->b", gt, step) <= 1e-4 * slope  # F(trial) - F <= g(trial)'step
            bad = np.flatnonzero(long_ & ~newton_ok & ~convex_ok)
            if bad.size:
                F0 = self._objective(X[bad], Y[bad], th[bad], bb[bad], Delta)
                for _ in range(45):
                    Ft = self._objective(X[bad], Y[bad], trial[bad], bb[bad], Delta)
                    ok = Ft <= F0 + 1e-4 * t[bad] * slope[bad] + 64.0 * np.finfo(float).eps * np.abs(F0)
                    if ok.all():
                        break
                    t[bad[~ok]] *= 0.5
                    trial[bad] = _into_ball(th[bad] + t[bad, None] * step[bad], r)
                    bad, F0 = bad[~ok], F0[~ok]
                redo = t < 1.0
                if redo.any():
                    N1[redo], N2[redo] = self._derivs(X[redo], Y[redo], trial[redo])
                    gt[redo] = self._gradient(X[redo], N1[redo], trial[redo], bb[redo], Delta)
            theta[active], d1[active], d2[active] = trial, N1, N2
            taken = t * np.linalg.norm(step, axis=1)
            interior = np.linalg.norm(trial, axis=1) < r * (1.0 - 1e-9)
            est = np.where(interior, np.linalg.norm(gt, axis=1) / np.linalg.eigvalsh(H)[:, 0], np.inf)
            active = active[(t < 1.0) | ((taken > tol) & (est > tol))]
        return theta
