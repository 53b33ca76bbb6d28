"""Evaluation metrics: ranking (R@k, mAP, mINP), mSD, the progressive protocol and a summary."""

from engine.retrieval.metrics.summary import SUMMARY_KEYS, evaluate_all, summarise

__all__ = ["SUMMARY_KEYS", "evaluate_all", "summarise"]
