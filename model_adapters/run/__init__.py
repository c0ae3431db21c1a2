"""`triad run`'s run: its settings, phases, encoder, clock, memo, results.json and console output.

`runner.Run` calls the phases in order. `config.RunConfig` holds the settings, `encoder.RunEncoder` the model as the
encode loop sees it, `memo.RunMemo` what a re-run skips, `clock.PhaseClock` the seconds per phase,
`results_json` assembles results.json and `console` prints the tables. `model_adapters.runner` is the public
entry point.
"""
