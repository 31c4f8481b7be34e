"""What makes a script's run bad (``--regress``), as cargo-bisect-rustc names it: a constant of its own so that the
command line can offer the choices without loading the runner."""

#: a non-zero exit (error), exit 0 (success: when did it start working), being killed by a signal such as a fatal
#: check failure's abort (crash), ending without one (non-crash), running past its timeout (hang). Exit 125 is
#: untestable under every rule, as for ``git bisect run``.
REGRESS = ("error", "success", "crash", "non-crash", "hang")
