package io.github.delayqueue.sample;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Says, once the sample is up, how to try it: the request that places an order, and what
 * happens to it.
 */
@Component
class TryItOut implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(TryItOut.class);

	private final SampleProperties properties;

	TryItOut(SampleProperties properties) {
		this.properties = properties;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		Environment environment = event.getApplicationContext().getEnvironment();
		String port = environment.getProperty("local.server.port", "8080");
		logger.info("Try it: curl -X POST localhost:" + port + "/orders -H 'Content-Type: application/json' -d"
				+ " '{\"item\":\"book\",\"amount\":12.5}' places an order that is cancelled " + later()
				+ " unless paid (POST /orders/<id>/pay);"
				+ " GET /orders/<id> shows it, /actuator/delayqueue the queue (docs/sample.md)");
	}

	private String later() {
		long millis = this.properties.orderTimeout().toMillis();
		return (millis % 1000 == 0) ? (millis / 1000) + " s later" : millis + " ms later";
	}

}
