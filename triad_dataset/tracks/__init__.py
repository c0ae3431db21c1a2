"""The three tracks' builders (paper Appendix A): abstraction, constraints (+ its gate), state, same.

Above `contract`, `sources` and `folder`; below `editions`.
"""
