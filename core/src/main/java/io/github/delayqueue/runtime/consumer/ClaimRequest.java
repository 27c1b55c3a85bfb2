package io.github.delayqueue.runtime.consumer;

/**
 * One claim request: sent again with the same token until it gets an answer.
 *
 * @param token the claim's lease token, which its hand-back names
 * @param wanted how many due messages it asks for, the handler slots it took
 * @param earlyLimit how many messages not yet due it may take
 */
record ClaimRequest(String token, int wanted, int earlyLimit) {
}
