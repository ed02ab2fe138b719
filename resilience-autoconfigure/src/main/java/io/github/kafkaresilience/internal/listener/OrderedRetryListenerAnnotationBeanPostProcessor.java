package io.github.kafkaresilience.internal.listener;

import java.io.IOException;
import java.io.StringReader;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

import io.github.kafkaresilience.OrderedRetryListener;
import io.github.kafkaresilience.listener.TenantResolver;
import io.github.kafkaresilience.internal.support.ListenerConsumers;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanExpressionContext;
import org.springframework.beans.factory.config.BeanExpressionResolver;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.messaging.handler.annotation.SendTo;
import org.springframework.util.StringUtils;

/**
 * Finds {@code @OrderedRetryListener} methods on beans, refuses those whose parameters or
 * return type make no sense here (an acknowledgment, the consumer, a batch, a result
 * completed later), resolves their attributes ({@code ${...}} placeholders and
 * {@code #{...}} expressions) and registers them with the {@link ListenerRegistry}.
 *
 * @since 0.1.0
 */
public class OrderedRetryListenerAnnotationBeanPostProcessor implements BeanPostProcessor, BeanFactoryAware {

	private @Nullable ConfigurableListableBeanFactory beanFactory;

	private @Nullable String defaultGroupId;

	private @Nullable ListenerRegistry registry;

	/**
	 * @param defaultGroupId the group used when a listener names none
	 * ({@code spring.kafka.consumer.group-id})
	 */
	public OrderedRetryListenerAnnotationBeanPostProcessor(@Nullable String defaultGroupId) {
		this.defaultGroupId = defaultGroupId;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
		this.beanFactory = (ConfigurableListableBeanFactory) beanFactory;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		Map<Method, OrderedRetryListener> annotated = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<OrderedRetryListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, OrderedRetryListener.class));
		annotated.forEach((method, annotation) -> registry()
			.register(endpoint(bean, beanName, AopUtils.selectInvocableMethod(method, bean.getClass()), annotation)));
		return bean;
	}

	private ListenerRegistry registry() {
		if (this.registry == null) {
			// the bean factory is set before any bean is post-processed
			this.registry = Objects.requireNonNull(this.beanFactory).getBean(ListenerRegistry.class);
		}
		return this.registry;
	}

	ListenerEndpoint endpoint(Object bean, String beanName, Method method, OrderedRetryListener annotation) {
		String where = "@OrderedRetryListener on " + method.getDeclaringClass().getName() + "." + method.getName();
		Boolean batch = parseBoolean(resolve(annotation.batch()), "batch", where);
		boolean batchListener = batch != null && batch;
		ListenerMethodSignature.check(method, where, batchListener);
		Integer batchSize = parseInt(resolve(annotation.batchSize()), "batchSize", where, 1);
		if (batchSize != null && !batchListener) {
			throw new IllegalStateException(where + " has batchSize " + batchSize
					+ " but is no batch listener; set batch = \"true\" or remove batchSize");
		}
		String attemptTimeoutText = resolve(annotation.attemptTimeout());
		Duration attemptTimeout = StringUtils.hasText(attemptTimeoutText)
				? parseDuration(attemptTimeoutText.trim(), "attemptTimeout", where) : null;
		if (attemptTimeout != null && !AsyncResults.isAsync(method)) {
			throw new IllegalStateException(where + " has attemptTimeout " + attemptTimeoutText.trim() + " but returns "
					+ method.getReturnType().getSimpleName() + ", not a result that completes later; remove "
					+ "attemptTimeout, or return a CompletableFuture, a CompletionStage or a Mono");
		}
		if (attemptTimeout != null && (attemptTimeout.isZero() || attemptTimeout.isNegative())) {
			throw new IllegalStateException(
					where + " has attemptTimeout " + attemptTimeoutText.trim() + "; it must be positive");
		}
		String id = resolve(annotation.id());
		if (!StringUtils.hasText(id)) {
			id = beanName + "." + method.getName();
		}
		List<String> topics = new ArrayList<>();
		for (String topic : annotation.topics()) {
			for (String part : StringUtils.commaDelimitedListToStringArray(resolve(topic))) {
				if (StringUtils.hasText(part)) {
					topics.add(part.trim());
				}
			}
		}
		if (topics.isEmpty()) {
			throw new IllegalStateException(where + " names no topic");
		}
		String groupId = resolve(annotation.groupId());
		if (!StringUtils.hasText(groupId)) {
			groupId = StringUtils.hasText(this.defaultGroupId) ? this.defaultGroupId : id;
		}
		String delaysText = resolve(annotation.delays());
		List<Duration> delays = null;
		if (StringUtils.hasText(delaysText)) {
			delays = Arrays.stream(StringUtils.commaDelimitedListToStringArray(delaysText))
				.map(String::trim)
				.filter(StringUtils::hasText)
				.map((text) -> parseDuration(text, "delay", where))
				.toList();
		}
		Integer maxAttempts = parseInt(resolve(annotation.maxAttempts()), "maxAttempts", where, 1);
		Integer concurrency = parseInt(resolve(annotation.concurrency()), "concurrency", where, 1);
		Boolean idempotent = parseBoolean(resolve(annotation.idempotent()), "idempotent", where);
		String idempotencyKey = (this.beanFactory != null && StringUtils.hasText(annotation.idempotencyKey()))
				? this.beanFactory.resolveEmbeddedValue(annotation.idempotencyKey()) : annotation.idempotencyKey();
		Boolean autoStartup = parseBoolean(resolve(annotation.autoStartup()), "autoStartup", where);
		String containerFactory = resolve(annotation.containerFactory());
		return new ListenerEndpoint(id, groupId, topics, delays, maxAttempts, concurrency, idempotent,
				StringUtils.hasText(idempotencyKey) ? idempotencyKey.trim() : null, autoStartup == null || autoStartup,
				bean, method, StringUtils.hasText(containerFactory) ? containerFactory.trim() : null,
				consumerProperties(annotation.properties(), where), batchListener, batchSize, attemptTimeout,
				replyTopic(method, where), tenantResolver(annotation, where), rateLimit(annotation, where));
	}

	/**
	 * How the listener finds its records' tenants: by a header, an expression or a bean;
	 * {@code null} when it names none.
	 */
	private @Nullable TenantResolver tenantResolver(OrderedRetryListener annotation, String where) {
		String header = resolve(annotation.tenantHeader());
		String expression = (this.beanFactory != null && StringUtils.hasText(annotation.tenantExpression()))
				? this.beanFactory.resolveEmbeddedValue(annotation.tenantExpression()) : annotation.tenantExpression();
		String bean = resolve(annotation.tenantResolver());
		int named = (StringUtils.hasText(header) ? 1 : 0) + (StringUtils.hasText(expression) ? 1 : 0)
				+ (StringUtils.hasText(bean) ? 1 : 0);
		if (named > 1) {
			throw new IllegalStateException(
					where + " names more than one of tenantHeader, tenantExpression and " + "tenantResolver; name one");
		}
		if (StringUtils.hasText(header)) {
			return new HeaderTenantResolver(header.trim());
		}
		if (StringUtils.hasText(expression)) {
			try {
				return new ExpressionTenantResolver(expression.trim(), this.beanFactory);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(
						where + " has tenantExpression '" + expression.trim() + "': " + ex.getMessage(), ex);
			}
		}
		if (StringUtils.hasText(bean)) {
			ConfigurableListableBeanFactory beanFactory = Objects.requireNonNull(this.beanFactory);
			if (!beanFactory.containsBean(bean.trim())) {
				throw new IllegalStateException(
						where + " has tenantResolver '" + bean.trim() + "', but there is no " + "bean of that name");
			}
			return beanFactory.getBean(bean.trim(), TenantResolver.class);
		}
		return null;
	}

	private @Nullable Double rateLimit(OrderedRetryListener annotation, String where) {
		String text = resolve(annotation.rateLimit());
		if (!StringUtils.hasText(text)) {
			return null;
		}
		double limit;
		try {
			limit = Double.parseDouble(text.trim());
		}
		catch (NumberFormatException ex) {
			throw new IllegalStateException(
					where + " has rateLimit '" + text.trim() + "', which is not a number of " + "records a second", ex);
		}
		if (!(limit > 0) || Double.isInfinite(limit)) {
			throw new IllegalStateException(
					where + " has rateLimit " + text.trim() + "; it must be a positive number of records a second");
		}
		return limit;
	}

	/**
	 * The topic of a method's {@code @SendTo}, resolved as spring-kafka resolves a
	 * {@code @KafkaListener}'s: placeholders and {@code #{...}} now, a {@code !{...}}
	 * expression per reply; empty for the request's {@code KafkaHeaders.REPLY_TOPIC};
	 * {@code null} without {@code @SendTo}.
	 */
	private @Nullable String replyTopic(Method method, String where) {
		SendTo sendTo = AnnotatedElementUtils.findMergedAnnotation(method, SendTo.class);
		if (sendTo == null) {
			return null;
		}
		String[] destinations = sendTo.value();
		if (destinations.length > 1) {
			throw new IllegalStateException(where + " has @SendTo with " + destinations.length
					+ " destinations; name one topic, or none to reply to the request's KafkaHeaders.REPLY_TOPIC");
		}
		String topic = (destinations.length == 1) ? resolve(destinations[0]) : "";
		return (topic != null) ? topic.trim() : "";
	}

	/**
	 * The {@code properties} of a listener, read as {@code @KafkaListener} reads its own.
	 */
	private Map<String, String> consumerProperties(String[] entries, String where) {
		Properties properties = new Properties();
		for (String entry : entries) {
			String resolved = resolve(entry);
			try {
				properties.load(new StringReader(resolved));
			}
			catch (IOException | IllegalArgumentException ex) {
				throw new IllegalStateException(where + " has property '" + resolved + "', which is not key=value", ex);
			}
		}
		Map<String, String> consumerProperties = new LinkedHashMap<>();
		properties.stringPropertyNames().forEach((name) -> consumerProperties.put(name, properties.getProperty(name)));
		Set<String> fixed = new TreeSet<>(consumerProperties.keySet());
		fixed.retainAll(ListenerConsumers.FIXED);
		if (!fixed.isEmpty()) {
			throw new IllegalStateException(where + " sets " + fixed + " in its properties; the library sets them "
					+ "(use groupId for the group; the library commits; the consumer factory's deserializers are used)");
		}
		return consumerProperties;
	}

	private static Duration parseDuration(String text, String attribute, String where) {
		try {
			return DurationStyle.detectAndParse(text);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException(
					where + " has " + attribute + " '" + text + "', which is not a duration (use 30s, 5m, 1h)", ex);
		}
	}

	private static @Nullable Boolean parseBoolean(String text, String attribute, String where) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		return switch (text.trim().toLowerCase(Locale.ROOT)) {
			case "true" -> true;
			case "false" -> false;
			default -> throw new IllegalStateException(
					where + " has " + attribute + " '" + text + "', which is neither true nor false");
		};
	}

	private static @Nullable Integer parseInt(String text, String attribute, String where, int min) {
		if (!StringUtils.hasText(text)) {
			return null;
		}
		try {
			int value = Integer.parseInt(text.trim());
			if (value < min) {
				throw new IllegalStateException(
						where + " has " + attribute + " " + value + " but it must be at least " + min);
			}
			return value;
		}
		catch (NumberFormatException ex) {
			throw new IllegalStateException(where + " has " + attribute + " '" + text + "', which is not a number", ex);
		}
	}

	private String resolve(String value) {
		if (this.beanFactory == null || !StringUtils.hasText(value)) {
			return value;
		}
		String resolved = this.beanFactory.resolveEmbeddedValue(value);
		BeanExpressionResolver resolver = this.beanFactory.getBeanExpressionResolver();
		if (resolver != null && resolved != null) {
			Object evaluated = resolver.evaluate(resolved, new BeanExpressionContext(this.beanFactory, null));
			return (evaluated != null) ? evaluated.toString() : "";
		}
		return (resolved != null) ? resolved : "";
	}

}
