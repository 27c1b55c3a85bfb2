package io.github.delayqueue.listener;

/**
 * Decides what happens to a message whose {@link DelayListener} method threw: one bean of
 * this type serves every listener of the application (switch on
 * {@link ListenerFailure#topic()} for per-topic rules). Without one, the built-in policy
 * applies ({@link ListenerFailure#defaultAction()}); return it for the failures a handler
 * has no rule for.
 *
 * <p>
 * It runs on the listener's thread while the message is leased, once per failed message
 * (per message of a failed batch). If it throws, or returns {@code null}, the built-in
 * policy applies and a warning is logged.
 */
@FunctionalInterface
public interface DelayListenerErrorHandler {

	/** The built-in policy. */
	DelayListenerErrorHandler DEFAULT = ListenerFailure::defaultAction;

	/**
	 * Decides what happens to a message whose listener failed.
	 * @param failure the failure
	 * @return the action
	 */
	FailureAction handle(ListenerFailure failure);

}
