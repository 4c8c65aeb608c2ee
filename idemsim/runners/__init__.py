"""What runs the model: one simulation (`simulation`), one story under every design (`compare`), a grid of runs
(`sweep`, inline, on every core or on Dask), the search for a counterexample (`explore`, with Hypothesis's
`strategies`), and results as plain records (`rows`).
"""
