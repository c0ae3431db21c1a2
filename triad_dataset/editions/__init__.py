"""The editions built from the tracks: mini, full, one domain's build, and pool scaling (paper A.5).

Above `tracks`; below the CLI's `commands`.
"""
