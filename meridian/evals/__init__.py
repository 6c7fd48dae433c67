"""Agent evaluation harness: suites, agents, graders, runner, run store, compare."""
