"""idemsim on a web page: the engine both of the page's engines run (`idemsim.web.engine`: JSON in, JSON out), the
local server of ``idemsim serve`` (`idemsim.web.server`), the static site of ``idemsim site`` (`idemsim.web.site`)
and the page itself (``page/``: HTML, CSS and JavaScript, shipped in the package). docs/web.md describes them.

Importing this package imports nothing: the engine runs in Pyodide, where only SimPy and pydantic are installed, so
none of its modules may load rich, typer, matplotlib or hypothesis.
"""
