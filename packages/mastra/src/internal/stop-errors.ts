// The stop errors, the stop mode and the model-readable report are core's (CallStopError,
// StopMode, stopReport): every adapter uses the same names and words.
export { isCallStopError, stopReport } from '@toolfence/core';
