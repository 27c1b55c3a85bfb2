package io.github.delayqueue.benchmarks;

/** A handler that forwards to whichever handler the current phase of a scenario set. */
final class SwitchableHandler implements PayloadHandler {

	private volatile PayloadHandler target = (payload) -> {
	};

	void set(PayloadHandler target) {
		this.target = target;
	}

	@Override
	public void handle(String payload) {
		this.target.handle(payload);
	}

}
