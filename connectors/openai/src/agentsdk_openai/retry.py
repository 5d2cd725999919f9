"""The core retry policy, re-exported: ``agentsdk.retry`` is where it lives."""

from agentsdk.retry import RetryPolicy, parse_retry_after

__all__ = ["RetryPolicy", "parse_retry_after"]
