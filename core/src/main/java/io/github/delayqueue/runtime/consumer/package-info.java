/**
 * A topic's consumer, split into its policies: the {@code Fetcher} claims and holds
 * messages until due (its {@code ClaimLoop}, {@code DispatchQueue} and
 * {@code EarlyMessages}), the {@code DeliveryHandler} decodes, applies the late policy,
 * converts, observes and invokes, {@code Settlement} acknowledges, retries or
 * dead-letters once per lease, the {@code LeaseKeeper} extends leases and hands messages
 * back, and the {@code AckBatcher} sends acknowledgements in batches.
 */
@NullMarked
package io.github.delayqueue.runtime.consumer;

import org.jspecify.annotations.NullMarked;
