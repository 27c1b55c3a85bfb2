package io.github.delayqueue.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Forwards a fixed local port to a Redis: closed, the port refuses connections as a Redis
 * that is down does; open again, Redis is back on the same address.
 */
public final class TcpForwarder implements AutoCloseable {

	private final ServerSocket server;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private TcpForwarder(int port, String host, int targetPort) throws IOException {
		this.server = new ServerSocket();
		this.server.setReuseAddress(true);
		this.server.bind(new InetSocketAddress("127.0.0.1", port));
		Thread acceptor = new Thread(() -> {
			while (!this.server.isClosed()) {
				try {
					Socket client = this.server.accept();
					Socket target = new Socket(host, targetPort);
					this.sockets.add(client);
					this.sockets.add(target);
					pipe(client, target);
					pipe(target, client);
				}
				catch (IOException ex) {
					// Closed.
				}
			}
		}, "tcp-forwarder");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	/**
	 * Starts forwarding.
	 * @param port the local port
	 * @param host the Redis host
	 * @param targetPort the Redis port
	 * @return the forwarder
	 */
	public static TcpForwarder start(int port, String host, int targetPort) {
		try {
			return new TcpForwarder(port, host, targetPort);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * @return a local port free now, on which nothing answers until a forwarder starts
	 */
	public static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void pipe(Socket from, Socket to) {
		Thread thread = new Thread(() -> {
			try {
				from.getInputStream().transferTo(to.getOutputStream());
			}
			catch (IOException ex) {
				// Closed.
			}
		}, "tcp-forwarder-pipe");
		thread.setDaemon(true);
		thread.start();
	}

	/** Stops forwarding and closes every connection: the port refuses connections. */
	@Override
	public void close() throws IOException {
		this.server.close();
		for (Socket socket : this.sockets) {
			socket.close();
		}
	}

}
