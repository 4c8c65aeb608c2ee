"""Shared test set-up: Hypothesis settings profiles.

Profiles: ``dev`` (default, quick), ``ci`` (what CI runs; CI=true selects it) and ``thorough`` (a larger
budget for a local soak). Choose with IDEMSIM_HYPOTHESIS_PROFILE=thorough.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("IDEMSIM_HYPOTHESIS_PROFILE",
                                     "ci" if os.environ.get("CI") == "true" else "dev"))
