package io.github.delayqueue.test.readme;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The application around the README's examples, as a user's would be.
 */
@SpringBootApplication
class ReadmeApplication {

}
