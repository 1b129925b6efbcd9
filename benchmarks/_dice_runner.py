"""Run DiCE (Mothilal et al. 2020, ``dice-ml``, its default "random" method) on the people of
``benchmarks/counterfactuals.py``.  Runs in whatever Python has ``dice_ml`` (a separate virtual
environment is fine: DiCE is never a dependency of riskformula); reads and writes plain files.

    python _dice_runner.py job.json

``job.json``: model (path of the riskformula JSON), train / people (CSV paths, decoded: one
categorical column per one-hot group), continuous, categorical (feature names), groups
(column -> one-hot members, "none" for none of them), outcome, desired_class, threshold
(stopping_threshold), features_to_vary, total_cfs, seed, out (CSV path written).
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
import pandas as pd


def main(path: str) -> None:
    warnings.simplefilter("ignore")
    job = json.loads(open(path).read())
    import dice_ml
    import riskformula as rf

    model = rf.from_json(open(job["model"]).read())
    train = pd.read_csv(job["train"])
    people = pd.read_csv(job["people"], index_col=0)
    cont, cat = job["continuous"], job["categorical"]
    groups = job["groups"]
    for c in cat:
        train[c] = train[c].astype(str)
        people[c] = people[c].astype(str)
    features = cont + cat

    class Wrapped:
        """The risk score as DiCE's sklearn backend sees it: decoded frame in, class probabilities out."""

        def _encode(self, X: pd.DataFrame) -> pd.DataFrame:
            X = X.copy()
            for g, members in groups.items():
                for m_ in members:
                    X[m_] = (X[g].astype(str) == m_).astype(int)
                X = X.drop(columns=[g])
            for c in cat:
                if c not in groups:
                    X[c] = pd.to_numeric(X[c])
            for c in cont:
                X[c] = pd.to_numeric(X[c])
            return X

        def predict_proba(self, X):
            p = model.predict(self._encode(pd.DataFrame(X, columns=features))).to_numpy()
            return np.column_stack([1 - p, p])

        def predict(self, X):
            return (self.predict_proba(X)[:, 1] >= 0.5).astype(int)

    d = dice_ml.Data(dataframe=train[features + [job["outcome"]]], continuous_features=cont,
                     outcome_name=job["outcome"])
    m = dice_ml.Model(model=Wrapped(), backend="sklearn")
    exp = dice_ml.Dice(d, m)  # the default method: "random"
    rows = []
    for label, person in people.iterrows():
        q = person[features].to_frame().T
        for c in cont:
            q[c] = pd.to_numeric(q[c])
        np.random.seed(job["seed"])
        t0 = time.perf_counter()
        try:
            res = exp.generate_counterfactuals(q, total_CFs=job["total_cfs"], desired_class=job["desired_class"],
                                               stopping_threshold=job["threshold"],
                                               features_to_vary=job["features_to_vary"], verbose=False,
                                               random_seed=job["seed"])
            cfs = res.cf_examples_list[0].final_cfs_df
            err = ""
        except Exception as e:  # DiCE raises when it finds nothing
            cfs, err = None, f"{type(e).__name__}: {e}"
        secs = time.perf_counter() - t0
        if cfs is None or len(cfs) == 0:
            rows.append({"person": label, "k": 0, "seconds": secs, "error": err or "no counterfactual"})
            continue
        for k, (_, r) in enumerate(cfs.iterrows(), 1):
            rows.append({"person": label, "k": k, "seconds": secs, "error": "",
                         **{c: r[c] for c in features}})
    pd.DataFrame(rows).to_csv(job["out"], index=False)


if __name__ == "__main__":
    main(sys.argv[1])
