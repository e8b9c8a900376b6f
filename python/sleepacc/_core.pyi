"""Type stubs of sleepacc._core, the C extension (python/_ext/*.c).

Functions take and return core units (int ns) and plain Python objects;
the sleepacc package adds names and validation on top."""
from typing import Any, Optional, Sequence, SupportsFloat, SupportsIndex, Union

VERSION: str
MAX_DURATION_NS: int
HIST_PRECISION: float
MAX_SAMPLES: int
SWEEP_BUDGET_NS: int   # a sweep's budget per point when none is given
stats_fields: tuple[str, ...]
result_fields: tuple[str, ...]
policy_names: tuple[str, ...]   # index = the core's value
mode_names: tuple[str, ...]     # index = the core's value
default_durations_ns: tuple[int, ...]

def methods() -> list[dict[str, Any]]: ...   # sleepacc_method_info_fields
def seconds_ns(seconds: Union[SupportsFloat, SupportsIndex]) -> int: ...   # errors name `seconds`
# A config is a mapping of sleepacc_config_fields (config_default()'s keys,
# env nested); absent keys keep the core's default.
def config_default() -> dict[str, Any]: ...
def sleeper_default() -> dict[str, Any]: ...   # sleepacc_sleeper_config_fields
# plan: {option: value} (sleepacc_options names) -> the checked config.
def plan(options: dict[str, Any], sweep_point: bool = ...) -> dict[str, Any]: ...
# sweep_plan: {"methods": names, "durations": seconds, "mode": mode} (a list absent: the default).
def sweep_plan(options: dict[str, Any]) -> list[dict[str, Any]]: ...   # {method, duration_ns} each
def sweep_skips() -> list[str]: ...   # why the default sweep leaves a method out, one line each
# measure: the same options as plan, read and checked by the core as it starts the run;
# point as sweep_point.
def measure(options: dict[str, Any], point: bool = ...) -> dict[str, Any]: ...
# env_hold: {slack, policy, priority, cpu} applied to the calling thread by the core (the env
# applied, a config's env); env_release: that thread as the last env_hold found it.
def env_hold(options: dict[str, Any]) -> dict[str, int]: ...
def env_release() -> bool: ...
def stats(values: Any, threshold: int) -> dict[str, Union[int, float]]: ...
def stats_level(name: str) -> float: ...   # quantile level of a statistic; -1: none
# table: records (dicts of method, requested_ns, mode, stats (a dict), cpu_percent), a list
# of them or one, read by the core (sleepacc_fields_read); a bad one names its way, "results[2].mode".
def table(results: Union[Sequence[dict[str, Any]], dict[str, Any]], style: str = ...) -> str: ...
def format_duration(ns: int) -> str: ...
def host_facts() -> dict[str, Union[int, str, None]]: ...
def clock_info(reads: int = ...) -> dict[str, dict[str, Optional[int]]]: ...

# Sleeper and Pacer (sleeper.c) are typed in precise.pyi, which wraps them.
def __getattr__(name: str) -> Any: ...
