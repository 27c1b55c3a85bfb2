package io.github.delayqueue.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of the sample, under {@code sample.*}.
 *
 * @param orderTimeout how long a new order may stay unpaid before it is cancelled
 */
@ConfigurationProperties("sample")
public record SampleProperties(@DefaultValue("30s") Duration orderTimeout) {
}
