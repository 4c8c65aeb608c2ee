"""Views of a run: each reads the run's trace and summary, and nothing else, and draws it one way.

=====================  =================================================================================
``timeline``           each trace event in words: the plain text the golden files compare, and every
                       other view's wording
``verdicts``           the run's two verdicts in words, for every view: the design's (green only when it
                       holds; else what went wrong) and the story's check (neutral)
``terminal``           rich tables for the terminal: the timeline, the summary, ``compare`` and ``show``
``mermaid``            Mermaid diagrams: a sequence diagram per story, the key record's state diagram
``figure``             matplotlib figures: the time-space diagram of a run, one panel per design
``spacetime``          what that diagram shows, read from the trace (lanes, messages, spans, marks)
``placement``          where its labels go, so that no two overlap
``html``               a `Run` as HTML for Jupyter: the timeline as a table with the figure embedded
=====================  =================================================================================

The model never imports a view. Views that need matplotlib import it inside their functions, so that
``idemsim run`` never does.
"""
