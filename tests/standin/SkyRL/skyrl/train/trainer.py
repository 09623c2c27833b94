"""STAND-IN for upstream SkyRL's `skyrl.train.trainer` (0.4.0), used only by rlctl's tests: the
part of `RayPPOTrainer` a callback sees, and nothing that trains.

It imitates upstream's callback surface and the order of its logging:
  * `RayPPOTrainer(cfg, tracker, callbacks=None)` keeps `cfg`, `tracker` and `global_step`, and a
    REAL `CallbackHandler` (skyrl/train/utils/callbacks.py, the wheel's, copied into the checkout);
    `add_callback` adds to it, as upstream's does;
  * `log(payload, step)` is upstream's step end (trainer.py near line 532): `on_log` fires with a
    real `CallbackInput` (global_step, epoch, total_steps, steps_per_epoch, logs=payload), then
    the REAL `Tracking.log(payload, step=step, commit=True)` commits it;
  * `saved(ckpt_path, step)` fires `on_save` with the checkpoint's folder, as upstream does after
    `save_checkpoints`; `start()` and `finish()` fire `on_train_start` and `on_train_end`, the
    latter followed by `tracker.finish()`.
Every payload logged is also appended to `<cfg.trainer.ckpt_path>/standin_logged.jsonl`
({"step", "payload"}, floats in full, anything JSON cannot hold as its repr), so that a test
compares what reached the job log with what the trainer committed.
"""

import json
import os

from skyrl.train.utils.callbacks import CallbackHandler, CallbackInput, TrainingControl


class RayPPOTrainer:
    def __init__(self, cfg, tracker, callbacks=None):
        self.cfg = cfg
        self.tracker = tracker
        self.global_step = 0
        self.total_training_steps = cfg.trainer.max_training_steps or 0
        self._callback_handler = CallbackHandler(callbacks)
        self._training_control = TrainingControl()
        self._current_epoch = 0

    def add_callback(self, callback):
        """Register a callback. Events fired after this call reach the new callback."""
        self._callback_handler.add(callback)

    def _fire(self, event_name, **fields):
        cb_input = CallbackInput(
            global_step=self.global_step,
            epoch=self._current_epoch,
            total_steps=self.total_training_steps,
            steps_per_epoch=self.total_training_steps,
            **fields,
        )
        getattr(self._callback_handler, event_name)(self, cb_input, self._training_control)

    def start(self, step):
        self.global_step = step
        self._fire("on_train_start")

    def log(self, payload, step):
        self.global_step = step
        self._fire("on_log", logs=payload)
        self._record(payload, step)
        self.tracker.log(payload, step=step, commit=True)

    def saved(self, ckpt_path, step):
        self.global_step = step
        self._fire("on_save", ckpt_path=ckpt_path)

    def finish(self):
        self._fire("on_train_end")
        self.tracker.finish()

    def _record(self, payload, step):
        path = os.path.join(self.cfg.trainer.ckpt_path, "standin_logged.jsonl")
        with open(path, "a") as f:
            f.write(json.dumps({"step": step, "payload": payload}, default=repr) + "\n")
