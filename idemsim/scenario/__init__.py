"""What a run simulates: the scenario file's schema (`idemsim.scenario.schema`: the story, its variants, faults,
expectations and sweep), validated strictly, and its loading (built-in names, files, ``--set``, variants).
"""
